# Arbiter production image: one image for the web (gunicorn, the default CMD), the Celery
# worker and the one-shot migration (see docker-compose.yml).
#
#   docker build -t arbiter .
#   docker run --rm -e SECRET_KEY=... -e ALLOWED_HOSTS=... -e DATABASE_URL=... arbiter
#
# The whole build context is copied (COPY . .): .dockerignore decides what stays out, so a
# new app folder cannot be forgotten here. tests/test_image_build.py assembles the same file
# set and runs `check --deploy` and collectstatic on it.
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

# pg_dump and pg_restore for `manage.py backup` and `restore`, of the server's major version
# (docker-compose runs PostgreSQL 16; Debian's own client is 15, which refuses a newer server):
# from the PostgreSQL project's apt repository, set up by its own script.
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl postgresql-common \
    && /usr/share/postgresql-common/pgdg/apt.postgresql.org.sh -y \
    && apt-get install -y --no-install-recommends postgresql-client-16 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Dependencies first, from pyproject.toml alone, so a code change does not reinstall them.
# All runtime wheels (psycopg[binary], numpy, Pillow) are manylinux binaries: no compiler.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

COPY . .
RUN pip install --no-deps . \
    && rm -rf build ./*.egg-info

# Static files are collected into the image (served by WhiteNoise with hashed names).
# config.production insists on a strong SECRET_KEY and on ALLOWED_HOSTS: a random key made
# for this step only, it does not persist in the image.
RUN SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(60))')" \
    ALLOWED_HOSTS=localhost \
    python manage.py collectstatic --noinput

USER arbiter

EXPOSE 8000

# gunicorn reads its worker count from WEB_CONCURRENCY: one per core the container gets
# (bench.load measured more workers than cores as slower, not faster). Set it per host.
ENV WEB_CONCURRENCY=2
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--timeout", "120"]
