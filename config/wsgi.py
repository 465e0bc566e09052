import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from core.scheduled_jobs import scheduler_start  # noqa: E402 (needs Django set up)

scheduler_start()  # the embedded mode's stand-in for Celery beat; nothing on the full stack
