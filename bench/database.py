"""The benchmarks' own PostgreSQL databases, recreated empty for each run."""


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
