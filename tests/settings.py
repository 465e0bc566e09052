"""The settings the suite runs with: the app's own, except that each pytest-xdist worker
takes a Redis database of its own, as pytest-django gives it a test database of its own, so
that two workers' caches, rate limits, brokers and Celery workers never meet. Worker gwN
takes the database N below the one REDIS_URL names (CI names 15: gw0 15, gw1 14, ...).
Processes a test starts inherit the worker's URL through the environment."""

import os

from config.settings import *  # noqa: F403
from config.settings import REDIS_URL as _SHARED_REDIS_URL

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _SHARED_REDIS_URL and _worker.startswith("gw"):
    from urllib.parse import urlsplit, urlunsplit

    _url = urlsplit(_SHARED_REDIS_URL)
    _database = int(_url.path.strip("/") or 0) - int(_worker.removeprefix("gw"))
    if _database < 0:
        raise RuntimeError(f"{_worker} has no Redis database below {_SHARED_REDIS_URL}")
    REDIS_URL = urlunsplit(_url._replace(path=f"/{_database}"))
    CACHES["default"]["LOCATION"] = REDIS_URL  # noqa: F405
    CELERY_BROKER_URL = REDIS_URL
    os.environ["REDIS_URL"] = REDIS_URL

# Processes that tests start (gunicorn, Celery workers, manage.py) run the app's own settings.
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
