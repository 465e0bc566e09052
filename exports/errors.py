from core.errors import Invalid


class ExportInvalid(Invalid):
    """The export cannot be made as asked (target not empty, unknown task or format, an image
    missing from storage); the message says why. Nothing is left behind. An Invalid (400):
    what reaches a request synchronously is the request's options (task, format, flags); the
    rest happens in the background job, which records it as the job's error."""
