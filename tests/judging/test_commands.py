"""judge_add and judge_run from the command line, and their report."""

import json

import pytest
from django.core.management import CommandError, call_command

from judging.models import Judge, Verdict

pytestmark = pytest.mark.django_db(transaction=True)


def test_judge_add_creates_then_updates_only_what_is_given(capsys):
    call_command(
        "judge_add", "gpt", "--backend", "openai", "--model", "gpt-x",
        "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "OPENAI_API_KEY",
        "--concurrency", "16", "--rpm", "500", "--timeout", "30",
        "--sampling", '{"temperature": 0}', "--template", "t2i=mjbench-t2i",
    )  # fmt: skip
    assert "Created judge gpt" in capsys.readouterr().out
    call_command("judge_add", "gpt", "--concurrency", "32")
    judge = Judge.objects.get(name="gpt")
    assert (judge.concurrency, judge.requests_per_minute, judge.model) == (32, 500, "gpt-x")
    assert judge.api_key_env == "OPENAI_API_KEY" and judge.sampling == {"temperature": 0}
    assert judge.templates == {"t2i": "mjbench-t2i"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new-judge"], "needs --backend"),
        (["j", "--backend", "openai", "--concurrency", "0"], "concurrency"),
        (["j", "--backend", "openai", "--base-url", "not a url"], "base_url"),
        (
            ["j", "--backend", "openai", "--api-key-env", "sk-live-123 456"],
            "NAME of an environment",
        ),
        (["j", "--backend", "openai", "--sampling", "[1]"], "JSON object"),
        (["j", "--backend", "random", "--template", "t2i"], "KIND=NAME"),
    ],
)
def test_judge_add_refuses_bad_settings_with_a_message(args, message):
    with pytest.raises(CommandError, match=message):
        call_command("judge_add", *args)
    assert not Judge.objects.filter(name="j").exists()


def test_judge_run_wait_json_prints_the_final_counts(tmp_path, capsys):
    from tests.annotate.conftest import queued_pairs

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
    with pytest.raises(CommandError, match="no judge 'ghost'"):
        call_command("judge_run", "--project", "p", "--judge", "ghost")
    call_command("judge_add", "coin", "--backend", "random")
    with pytest.raises(CommandError, match="no pairs"):
        call_command("judge_run", "--project", "empty", "--judge", "coin")
