"""Settings from the environment (config.env) and the production settings module."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from config.env import EnvError, env_bool, env_int, env_list, parse_database_url

REPO_ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------- parse_database_url


def test_sqlite_relative_path():
    assert parse_database_url("sqlite:///relative.db") == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": "relative.db",
    }


def test_sqlite_absolute_path():
    assert parse_database_url("sqlite:////abs/path.db") == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": "/abs/path.db",
    }


def test_postgres_url():
    config = parse_database_url("postgres://u:p%40ss@host:5433/db?sslmode=require")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert config["NAME"] == "db"
    assert config["USER"] == "u"
    assert config["PASSWORD"] == "p@ss"  # percent-decoded
    assert config["HOST"] == "host"
    assert config["PORT"] == "5433"
    assert config["OPTIONS"] == {"sslmode": "require"}


def test_postgres_without_port_or_options():
    config = parse_database_url("postgres://u@db.internal/arbiter")
    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.internal", "", "arbiter")
    assert config["PASSWORD"] == ""
    assert config["OPTIONS"] == {}


def test_postgresql_alias():
    config = parse_database_url("postgresql://u:p@host:5432/db")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["USER"], config["PASSWORD"], config["PORT"]) == ("u", "p", "5432")


@pytest.mark.parametrize(
    "url",
    [
        "mysql://u:p@host/db",  # unsupported scheme
        "db.sqlite3",  # no scheme at all
        "postgres://u:p@host:5432/",  # no database name
        "postgres://u:p@host",  # no database name
        "postgres://u:p@host:port/db",  # port not a number
        "sqlite://",  # no path
        "sqlite://host/file.db",  # a host where a path belongs
    ],
)
def test_bad_database_url(url):
    with pytest.raises(EnvError, match="DATABASE_URL"):
        parse_database_url(url)


# ---------------------------------------------------------------- env readers


@pytest.mark.parametrize(
    ("raw", "value"),
    [("1", True), ("true", True), (" YES ", True), ("on", True), ("0", False), ("off", False)],
)
def test_env_bool(monkeypatch, raw, value):
    monkeypatch.setenv("ARBITER_TEST_FLAG", raw)
    assert env_bool("ARBITER_TEST_FLAG") is value


def test_env_bool_is_strict(monkeypatch):
    monkeypatch.setenv("ARBITER_TEST_FLAG", "maybe")
    with pytest.raises(EnvError, match="ARBITER_TEST_FLAG"):
        env_bool("ARBITER_TEST_FLAG")


def test_env_bool_default_when_unset(monkeypatch):
    monkeypatch.delenv("ARBITER_TEST_FLAG", raising=False)
    assert env_bool("ARBITER_TEST_FLAG") is False
    assert env_bool("ARBITER_TEST_FLAG", True) is True


def test_env_int(monkeypatch):
    monkeypatch.setenv("ARBITER_TEST_INT", " 42 ")
    assert env_int("ARBITER_TEST_INT", 1, minimum=1) == 42
    monkeypatch.setenv("ARBITER_TEST_INT", "")
    assert env_int("ARBITER_TEST_INT", 7) == 7
    monkeypatch.delenv("ARBITER_TEST_INT")
    assert env_int("ARBITER_TEST_INT", 7) == 7


def test_env_int_minimum(monkeypatch):
    monkeypatch.setenv("ARBITER_TEST_INT", "0")
    with pytest.raises(EnvError, match="ARBITER_TEST_INT"):
        env_int("ARBITER_TEST_INT", 5, minimum=1)
    assert env_int("ARBITER_TEST_INT", 5, minimum=0) == 0


def test_env_int_not_a_number(monkeypatch):
    monkeypatch.setenv("ARBITER_TEST_INT", "ten")
    with pytest.raises(EnvError, match="ARBITER_TEST_INT"):
        env_int("ARBITER_TEST_INT", 5)


def test_env_list(monkeypatch):
    monkeypatch.setenv("ARBITER_TEST_LIST", "example.org, www.example.org")
    assert env_list("ARBITER_TEST_LIST", []) == ["example.org", "www.example.org"]
    monkeypatch.delenv("ARBITER_TEST_LIST")
    assert env_list("ARBITER_TEST_LIST", ["x"]) == ["x"]


@pytest.mark.parametrize("raw", ["a,,b", "a,", ",a", ""])
def test_env_list_empty_entry(monkeypatch, raw):
    monkeypatch.setenv("ARBITER_TEST_LIST", raw)
    with pytest.raises(EnvError, match="ARBITER_TEST_LIST"):
        env_list("ARBITER_TEST_LIST", [])


# ---------------------------------------------------------------- settings modules (subprocess)

_CLEARED = ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "MEDIA_ROOT")


def _env(tmp_path, **values) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env["ARBITER_VAR_DIR"] = str(tmp_path / "var")
    env.update(values)
    return env


def _run(args, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _production_env(tmp_path, **values) -> dict:
    return _env(
        tmp_path,
        DJANGO_SETTINGS_MODULE="config.production",
        SECRET_KEY=secrets.token_urlsafe(45),  # 60 characters
        ALLOWED_HOSTS="example.org",
        DATABASE_URL=f"sqlite:///{tmp_path / 'x.db'}",
        **values,
    )


def test_production_check_deploy_is_clean(tmp_path):
    env = _production_env(tmp_path)
    assert len(env["SECRET_KEY"]) == 60
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_requires_secret_key(tmp_path):
    env = _production_env(tmp_path)
    del env["SECRET_KEY"]
    result = _run(["manage.py", "check"], env)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_production_requires_allowed_hosts(tmp_path):
    env = _production_env(tmp_path)
    del env["ALLOWED_HOSTS"]
    result = _run(["manage.py", "check"], env)
    assert result.returncode != 0
    assert "ALLOWED_HOSTS" in result.stderr


_PRINT_DEBUG = (
    "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
)


def test_debug_is_off_when_unset(tmp_path):
    result = _run(["-c", _PRINT_DEBUG], _env(tmp_path, DJANGO_SETTINGS_MODULE="config.settings"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_debug_on_when_asked(tmp_path):
    env = _env(tmp_path, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="true")
    result = _run(["-c", _PRINT_DEBUG], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_debug_typo_stops_start_up(tmp_path):
    env = _env(tmp_path, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="ture")
    result = _run(["-c", _PRINT_DEBUG], env)
    assert result.returncode != 0
    assert "DEBUG" in result.stderr
    assert "EnvError" in result.stderr


@pytest.mark.parametrize(
    ("secret_key", "why"),
    [
        ("build-only-not-a-secret-collectstatic", "shorter than 50"),  # the old Dockerfile's
        ("ab" * 40, "fewer than 5 distinct characters"),
        ("django-insecure-" + "x7Kq2mPz9R" * 6, "Django's insecure prefix"),
    ],
    ids=["short", "few-characters", "insecure-prefix"],  # the same on every xdist worker
)
def test_production_refuses_a_weak_secret_key(tmp_path, secret_key, why):
    env = {**_production_env(tmp_path), "SECRET_KEY": secret_key}
    result = _run(["-c", _PRINT_DEBUG], env)  # settings load alone, as gunicorn/Celery do
    assert result.returncode != 0, why
    assert "ImproperlyConfigured" in result.stderr and "SECRET_KEY is weak" in result.stderr


@pytest.mark.parametrize("hosts", ["*", "example.org,*"])
def test_production_refuses_a_wildcard_host(tmp_path, hosts):
    result = _run(["-c", _PRINT_DEBUG], {**_production_env(tmp_path), "ALLOWED_HOSTS": hosts})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "ALLOWED_HOSTS" in result.stderr


def test_celery_refuses_weak_production_settings(tmp_path):
    env = {**_production_env(tmp_path), "SECRET_KEY": "short"}
    result = _run(["-c", "from config.celery import app; print(app.conf.broker_url)"], env)
    assert result.returncode != 0
    assert "SECRET_KEY is weak" in result.stderr


# ---------------------------------------------------------------- the embedded secret key


def test_reading_the_settings_writes_nothing_and_init_embedded_makes_the_key(tmp_path):
    env = _env(tmp_path, DJANGO_SETTINGS_MODULE="config.settings")
    var = tmp_path / "var"
    checked = _run(["manage.py", "check"], env)
    assert checked.returncode == 0, checked.stderr
    assert not var.exists()  # importing the settings made no folder and no key
    assert "arbiter.W001" in checked.stderr + checked.stdout  # the throwaway key is named

    made = _run(["manage.py", "init_embedded"], env)
    assert made.returncode == 0, made.stderr
    key_file = var / "secret_key"
    key = key_file.read_text()
    assert len(key) >= 50 and key_file.stat().st_mode & 0o777 == 0o600
    assert (var / "media").is_dir() and (var / "staticfiles").is_dir()

    again = _run(["manage.py", "init_embedded"], env)
    assert again.returncode == 0 and key_file.read_text() == key  # kept, not replaced
    checked = _run(["manage.py", "check"], env)
    assert "arbiter.W001" not in checked.stderr + checked.stdout


_PRINT_MAIL = (
    "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings');"
    "django.setup(); from django.conf import settings as s;"
    "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS, s.DEFAULT_FROM_EMAIL)"
)


def test_mail_is_configured_from_the_environment_only_when_a_host_is_given(tmp_path):
    plain = _run(["-c", _PRINT_MAIL], _env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.split()[:2] == ["django.core.mail.backends.smtp.EmailBackend", "localhost"]
    mail = _run(["-c", _PRINT_MAIL], _env(tmp_path, EMAIL_HOST="smtp.example.org", EMAIL_PORT="25"))
    assert mail.stdout.split() == [
        "django.core.mail.backends.smtp.EmailBackend", "smtp.example.org", "25", "True",
        "arbiter@smtp.example.org",
    ]  # fmt: skip
