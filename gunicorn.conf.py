"""Read by gunicorn from the folder it starts in (the checkout, the image's /app)."""

import os


def on_starting(server):
    # Several workers must share one SECRET_KEY (core/shared_key.py).
    if server.cfg.workers > 1:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        from core.shared_key import shared_key_required

        shared_key_required(f"gunicorn with {server.cfg.workers} workers")
