"""A throwaway SECRET_KEY (no SECRET_KEY and no key file) is enough for one process tried
once, never for several: each process would make its own, so sessions one gunicorn worker
signed read as corrupted to the next (users signed out on every other request) and a Celery
worker would name annotators in exports with other anonymous ids than the web process. A
server of more than one process (gunicorn.conf.py) and every Celery worker (config/celery.py)
therefore refuse to start on one; `runserver` and a single gunicorn worker keep the warning
of `check` (annotation/checks.py)."""

from django.conf import settings


def shared_key_required(what: str) -> None:
    """Stop the process (SystemExit, which no signal dispatcher swallows) on a throwaway key."""
    if getattr(settings, "SECRET_KEY_IS_THROWAWAY", False):
        raise SystemExit(
            f"{what} refuses to start: there is no SECRET_KEY and no key file, so each process "
            "would make its own throwaway key and reject the others' sessions. Set SECRET_KEY "
            "(the same in every process) or run `manage.py init_embedded`, which writes the key "
            "file."
        )
