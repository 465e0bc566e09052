"""`manage.py demo --host`: the links it prints name where the server answers (make demo
passes its HOST), not always 127.0.0.1:8000."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from demo.management.commands import demo as command

SEEDED = {
    "project": "demo", "pairs": {"t2i": 19}, "new_pairs": {"t2i": 10}, "annotators": ["a1"],
    "lead": "lead", "judges": ["always-a"],
    "finished": {"ratings": 1, "verdicts": 2, "candidates": 3, "export": True},
}  # fmt: skip


@pytest.fixture(autouse=True)
def _seeded(monkeypatch):
    """The seeding itself is tests/demo/test_demo.py's; here only what the command prints."""
    monkeypatch.setattr(command, "demo_seed", lambda password: SEEDED)


def _run(*args) -> str:
    out = io.StringIO()
    call_command("demo", *args, stdout=out)
    return out.getvalue()


def test_the_links_name_the_host_given():
    output = _run("--host", "0.0.0.0:9000")
    assert "ready at http://0.0.0.0:9000/" in output
    assert "http://0.0.0.0:9000/projects/demo/runs/" in output
    assert "127.0.0.1" not in output


def test_without_a_host_the_links_are_runservers_default():
    assert "ready at http://127.0.0.1:8000/" in _run()


@pytest.mark.parametrize("host", ["", "http://x:1", "a b:1", "x:1/path", "u@x:1"])
def test_a_host_that_is_not_host_port_is_refused(host):
    with pytest.raises(CommandError, match="--host is host:port"):
        _run("--host", host)
