"""judge_add and judge_run from the command line, and their report."""

import json

import pytest
from django.core.management import CommandError, call_command

from judging.models import Connection, Judge, Verdict
from projects.models import Project

pytestmark = pytest.mark.django_db(transaction=True)


def test_connection_add_then_judge_add_creates_then_updates_only_what_is_given(capsys):
    Project.objects.create(slug="p", name="P")
    call_command(
        "connection_add", "openai-main", "--backend", "openai",
        "--base-url", "http://127.0.0.1:9/v1/", "--api-key-env", "OPENAI_API_KEY",
        "--projects", "p",
    )  # fmt: skip
    assert "usable by p" in capsys.readouterr().out
    call_command(
        "judge_add", "gpt", "--project", "p", "--connection", "openai-main", "--model", "gpt-x",
        "--concurrency", "16", "--rpm", "500", "--timeout", "30",
        "--sampling", '{"temperature": 0}', "--template", "t2i=mjbench-t2i",
    )  # fmt: skip
    assert "Created judge gpt of project p" in capsys.readouterr().out
    call_command("judge_add", "gpt", "--project", "p", "--concurrency", "32")
    judge = Judge.objects.get(name="gpt")
    assert (judge.concurrency, judge.requests_per_minute, judge.model) == (32, 500, "gpt-x")
    assert (judge.backend, judge.connection.name, judge.project.slug) == (
        "openai",
        "openai-main",
        "p",
    )
    assert judge.connection.base_url == "http://127.0.0.1:9/v1"
    assert judge.sampling == {"temperature": 0} and judge.templates == {"t2i": "mjbench-t2i"}


def test_a_projects_judge_cannot_use_a_connection_of_other_projects():
    Project.objects.create(slug="p", name="P")
    Project.objects.create(slug="q", name="Q")
    call_command(
        "connection_add", "q-only", "--backend", "openai", "--base-url", "http://models.example/v1",
        "--projects", "q",
    )  # fmt: skip
    with pytest.raises(CommandError, match="no such connection for this project"):
        call_command("judge_add", "gpt", "--project", "p", "--connection", "q-only", "--model", "m")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new-judge"], "needs --backend"),
        (["j", "--backend", "random", "--concurrency", "0"], "concurrency"),
        (["j", "--backend", "random", "--concurrency", "257"], "concurrency"),
        (["j", "--backend", "random", "--timeout", "86400"], "timeout"),
        (["j", "--backend", "openai"], "needs a connection"),
        (["j", "--backend", "random", "--sampling", "[1]"], "JSON object"),
        (["j", "--backend", "random", "--sampling", '{"model": "x"}'], "unknown parameter"),
        (["j", "--backend", "random", "--sampling", '{"temperature": 9}'], "temperature"),
        (["j", "--backend", "random", "--template", "t2i"], "KIND=NAME"),
        (["j", "--backend", "random", "--template", "t2i=ghost"], "no template named ghost"),
    ],
)
def test_judge_add_refuses_bad_settings_with_a_message(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("judge_add", *args)
    assert not Judge.objects.filter(name="j").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["c"], "needs --backend and --base-url"),
        (["c", "--backend", "openai", "--base-url", "not a url"], "base_url"),
        (["c", "--backend", "openai", "--base-url", "http://models.example/v1?"], "query"),
        (["c", "--backend", "openai", "--base-url", "http://u:p@models.example/v1"], "credentials"),
        (
            ["c", "--backend", "openai", "--base-url", "http://x", "--api-key-env", "sk-1 2"],
            "NAME of an environment",
        ),
        (["c", "--backend", "openai", "--base-url", "http://x", "--projects", "nope"], "nope"),
    ],
)
def test_connection_add_refuses_bad_settings_with_a_message(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("connection_add", *args)
    assert not Connection.objects.exists()


def test_judge_run_wait_json_prints_the_final_counts(tmp_path, capsys):
    from tests.factories import queued_pairs

    task = queued_pairs(tmp_path, count=5)
    call_command("judge_add", "coin", "--backend", "random")
    capsys.readouterr()
    call_command(
        "judge_run", "--project", task.project.slug, "--judge", "coin", "--task", task.slug,
        "--samples", "3", "--wait", "--json",
    )  # fmt: skip
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] == "finished"
    assert (outcome["trials"], outcome["done"], outcome["failed"], outcome["remaining"]) == (
        30,
        30,
        0,
        0,
    )
    assert outcome["wall_seconds"] >= 0
    assert Verdict.objects.count() == 30


def test_judge_run_names_what_is_wrong():
    Project.objects.create(slug="p", name="P")
    with pytest.raises(CommandError, match="no judge 'ghost'"):
        call_command("judge_run", "--project", "p", "--judge", "ghost")
    call_command("judge_add", "coin", "--backend", "random")
    with pytest.raises(CommandError, match="no pairs"):
        call_command("judge_run", "--project", "p", "--judge", "coin")
    with pytest.raises(CommandError, match="no project 'typo'"):
        call_command("judge_run", "--project", "typo", "--judge", "coin")
    with pytest.raises(CommandError, match="no task 'typo' in p"):
        call_command("judge_run", "--project", "p", "--judge", "coin", "--task", "typo")
    assert list(Project.objects.values_list("slug", flat=True)) == ["p"]  # nothing created
