"""How every figure of `report --json` is rounded, in one place."""


def rounded(value):
    """Floats to 6 decimals (inside dicts too); anything else as it is."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    return value
