"""How every figure of `report --json` is rounded, in one place."""

from typing import Any, TypeVar, overload

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")


@overload
def rounded(value: float) -> float: ...
@overload
def rounded(value: dict[_Key, Any]) -> dict[_Key, Any]: ...
@overload
def rounded(value: _Value) -> _Value: ...
def rounded(value: object) -> object:
    """Floats to 6 decimals (inside dicts too); anything else as it is."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    return value
