"""Strict readers for settings that come from environment variables.

A typo in the environment must stop the process at start-up with a message that names the
variable, never silently fall back to a default.
"""

import os
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


class EnvError(ValueError):
    pass


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(f"{name}={raw!r} is not a boolean (use one of 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise EnvError(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise EnvError(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items):
        raise EnvError(f"{name}={raw!r} has an empty entry (comma-separated list expected)")
    return items


def parse_database_url(url: str) -> dict[str, Any]:
    """Turn `sqlite:///PATH` or `postgres://user:pass@host:port/name` into a DATABASES entry."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        # sqlite:///relative/path or sqlite:////absolute/path, as dj-database-url reads them.
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        if parts.netloc or not path:
            raise EnvError(f"DATABASE_URL={url!r}: expected sqlite:///PATH")
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path}
    if scheme in {"postgres", "postgresql", "pgsql"}:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise EnvError(f"DATABASE_URL={url!r}: the database name is missing")
        options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        try:
            port = parts.port
        except ValueError:
            raise EnvError(f"DATABASE_URL={url!r}: the port is not a number") from None
        config = {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": unquote(parts.hostname or ""),
            "PORT": str(port or ""),
            "CONN_MAX_AGE": int(options.pop("conn_max_age", 60)),
            # A kept connection is checked before a request uses it: after a database restart
            # the first request of each process reconnects instead of failing.
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
        return config
    raise EnvError(f"DATABASE_URL={url!r}: unsupported scheme {scheme!r} (sqlite or postgres)")
