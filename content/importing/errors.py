import math

from core.errors import Invalid


class ImportFailed(Invalid):
    """A record that cannot be imported. Nothing of the import is written. `message` names the
    record; `detail` is the message without it."""

    def __init__(self, message: str, record: int | None = None):
        self.record = record
        self.detail = message
        super().__init__(f"record {record}: {message}" if record is not None else message)


def require_storable_text(
    value: object,
    number: int | None,
    where: str = "record",
    *,
    max_chars: int | None = None,
    record_id: str | None = None,
    finite: bool = True,
) -> None:
    """Refuse values no database stores: a string with a NUL character (PostgreSQL text) or
    an unpaired surrogate (not UTF-8), which JSON allows as escapes, and a number that is not
    finite (NaN, Infinity, or 1e400 read as one: Python's parser and Parquet's floats let them
    through, a JSON column refuses them; `finite=False` for a file whose numbers are never
    stored as they are). The one home of these rules for every importer. With
    `max_chars` (ARBITER_MAX_TEXT_CHARS), also any string or key longer than that, naming
    the field and the record's id: one walk over the record does both."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ImportFailed(f"{where} contains a NUL character", number)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ImportFailed(f"{where} contains an unpaired surrogate", number) from None
        if max_chars is not None and len(value) > max_chars:
            named = f" (id {record_id!r})" if record_id else ""
            raise ImportFailed(
                f"{where}{named} is {len(value)} characters long, above the {max_chars} "
                "characters limit (ARBITER_MAX_TEXT_CHARS)",
                number,
            )
    elif finite and isinstance(value, float) and not math.isfinite(value):
        raise ImportFailed(f"{where}={value} must be a finite number", number)
    elif isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where != "record" else key
            require_storable_text(key, number, where, max_chars=max_chars, record_id=record_id)
            require_storable_text(
                item, number, inner, max_chars=max_chars, record_id=record_id, finite=finite
            )
    elif isinstance(value, list):
        for index, item in enumerate(value):
            require_storable_text(
                item,
                number,
                f"{where}[{index}]",
                max_chars=max_chars,
                record_id=record_id,
                finite=finite,
            )
