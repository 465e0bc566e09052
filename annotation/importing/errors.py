class ImportFailed(Exception):
    """A record that cannot be imported. Nothing of the import is written."""

    def __init__(self, message: str, record: int | None = None):
        self.record = record
        self.detail = message
        super().__init__(f"record {record}: {message}" if record is not None else message)
