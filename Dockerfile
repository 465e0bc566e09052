# Arbiter production image: one image for the web (gunicorn, the default CMD), the Celery
# worker and the one-shot migration (see docker-compose.yml).
#
#   docker build -t arbiter .
#   docker run --rm -e SECRET_KEY=... -e ALLOWED_HOSTS=... -e DATABASE_URL=... arbiter
FROM python:3.11-slim

# PYTHONPATH: the source tree in /app wins over the copy `pip install .` put in site-packages.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONPATH=/app \
    DJANGO_SETTINGS_MODULE=config.production \
    STATIC_ROOT=/app/staticfiles \
    MEDIA_ROOT=/data/media \
    ARBITER_VAR_DIR=/data/var

# Unprivileged runtime user. /data/media and /data/var are the only writable places; a named
# volume mounted on /data/media starts out with this ownership.
RUN groupadd --gid 1000 arbiter \
    && useradd --uid 1000 --gid arbiter --create-home --home-dir /home/arbiter \
        --shell /usr/sbin/nologin arbiter \
    && mkdir -p /data/media /data/var \
    && chown -R arbiter:arbiter /data

WORKDIR /app

# Dependencies and the Python packages (pyproject.toml, setuptools). All runtime wheels
# (psycopg[binary], numpy, Pillow) are manylinux binaries, so no compiler is needed.
COPY pyproject.toml ./
COPY config/ config/
COPY annotation/ annotation/
COPY judging/ judging/
COPY metrics/ metrics/
RUN pip install . \
    && rm -rf build ./*.egg-info

COPY manage.py ./
COPY templates/ templates/
COPY static/ static/

# Static files are collected into the image (served by WhiteNoise with hashed names).
# config.production insists on SECRET_KEY and ALLOWED_HOSTS: dummy values for this step only,
# they do not persist in the image.
RUN SECRET_KEY=build-only-not-a-secret-collectstatic ALLOWED_HOSTS=localhost \
    python manage.py collectstatic --noinput

USER arbiter

EXPOSE 8000

CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "120"]
