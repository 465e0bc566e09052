"""What the benchmarks share: the project root, the MMRB2 release files, the PostgreSQL
database each one recreates, the environment and Django setup of a benchmark process,
`manage.py` child processes, free ports and percentiles."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MMRB2 = ROOT.parent / "shared" / "datasets" / "mmrb2"
# The four MMRB2 sets: task slug → its file of always-"A" sample predictions under outputs/.
MMRB2_TASKS = {
    "t2i": "sample_task1_image",
    "edit": "sample_task2_edit",
    "interleaved": "sample_task3_interleaved",
    "reasoning": "sample_task4_reasoning",
}
POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/postgres"


# ---------------------------------------------------------------- command line


def add_postgres_argument(parser) -> None:
    """--postgres: the server on which the benchmark recreates its own database."""
    parser.add_argument(
        "--postgres",
        default=os.environ.get("BENCH_POSTGRES_URL", POSTGRES_URL),
        help="PostgreSQL server (URL of any database on it; default $BENCH_POSTGRES_URL or "
        f"{POSTGRES_URL})",
    )


def add_tasks_argument(parser) -> None:
    """--tasks: which MMRB2 sets to use (all four by default; one for a quick run)."""
    parser.add_argument(
        "--tasks",
        nargs="+",
        choices=list(MMRB2_TASKS),
        default=list(MMRB2_TASKS),
        metavar="TASK",
        help=f"MMRB2 sets to use, among {', '.join(MMRB2_TASKS)} (default: all four)",
    )


# ---------------------------------------------------------------- database and Django


def fresh_postgres(url: str, name: str) -> str:
    """Drop and create database `name` on the server of `url`; its URL."""
    import psycopg

    if name.startswith("test_"):  # the test databases of pytest runs are never touched
        raise ValueError(f"refusing to recreate {name!r}")
    admin, _, _ = url.rpartition("/")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return f"{admin}/{name}"


def django_env(database_url: str, var_dir: Path, redis_url: str | None = None) -> dict[str, str]:
    """The environment of a process on the bench database (this one, manage.py, gunicorn,
    a Celery worker); without `redis_url` REDIS_URL is unset (local-memory cache, eager
    Celery)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "ARBITER_VAR_DIR": str(var_dir),
        "MEDIA_ROOT": str(var_dir / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-0123456789abcdefghij",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        # The benches' judges are fake servers on 127.0.0.1 (core/outbound.py refuses those).
        "ARBITER_ALLOW_PRIVATE_ADDRESSES": "true",
    }
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def django_start(database_url: str, var_dir: Path, redis_url: str | None = None) -> dict:
    """Configure this process for the bench database, set Django up and migrate; the
    environment, for child processes."""
    env = django_env(database_url, var_dir, redis_url)
    os.environ.clear()
    os.environ.update(env)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", "--noinput", verbosity=0)
    return env


# ---------------------------------------------------------------- MMRB2 files and manage.py


def placeholder_images(folder: Path, tasks=tuple(MMRB2_TASKS)) -> Path:
    """A small labelled JPEG for every file the MMRB2 sets of `tasks` name (their own
    script)."""
    script = MMRB2 / "make_placeholder_images.py"
    files = [str(MMRB2 / f"{task}_response_only.json") for task in tasks]
    subprocess.run(
        [sys.executable, str(script), str(folder), *files], check=True, capture_output=True
    )
    return folder


def manage(env: dict, *args: str) -> tuple[float, str]:
    """`manage.py args` in a child process: its wall time (start-up included) and stdout."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return elapsed, done.stdout


# ---------------------------------------------------------------- small helpers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, q in 0..1."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[index]
