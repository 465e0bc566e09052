class ImportFailed(Exception):
    """A record that cannot be imported. Nothing of the import is written."""

    def __init__(self, message: str, record: int | None = None):
        self.record = record
        self.detail = message
        super().__init__(f"record {record}: {message}" if record is not None else message)


def require_storable_text(value: object, number: int | None, where: str = "record") -> None:
    """Refuse strings no database stores: a NUL character (PostgreSQL text) or an unpaired
    surrogate (not UTF-8). JSON allows both as escapes, so they get this far."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ImportFailed(f"{where} contains a NUL character", number)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ImportFailed(f"{where} contains an unpaired surrogate", number) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            require_storable_text(key, number, where)
            require_storable_text(item, number, f"{where}.{key}" if where != "record" else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            require_storable_text(item, number, f"{where}[{index}]")
