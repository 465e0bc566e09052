class ExportRefused(Exception):
    """The export cannot be made as asked (target not empty, unknown task or format, an image
    missing from storage); the message says why. Nothing is left behind."""
