"""`import_verdicts`: MMRB2 prediction files into canonical verdicts of a judge."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from content.importing.errors import ImportFailed
from content.models import Pair
from judging.models import Judge, JudgeRun, Verdict
from judging.services.verdict_import import canonical_choice, verdicts_import
from projects.models import Project
from tests.factories import mmrb2_pair, write_image, write_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tmp_path):
    """Project `proj` with pairs p1..p3 in task t2i and q1 in task edit."""
    images = tmp_path / "images"
    write_image(images / "a.png", (200, 0, 0))
    write_image(images / "b.png", (0, 0, 200))
    for task, ids in (("t2i", ["p1", "p2", "p3"]), ("edit", ["q1"])):
        path = write_jsonl(tmp_path / f"{task}.jsonl", [mmrb2_pair(i) for i in ids])
        call_command(
            "import_pairs",
            str(path),
            project="proj",
            task=task,
            images=str(images),
            stdout=io.StringIO(),
        )
    return "proj"


def write_predictions(tmp_path, predictions: dict, name="predictions.json"):
    path = tmp_path / name
    path.write_text(json.dumps(predictions))
    return path


def entry(forward=None, reverse=None) -> dict:
    """A prediction entry; each argument is a list of judgements (None: key left out)."""
    result = {}
    if forward is not None:
        result["forward"] = [{"judgement": j, "evaluator": "test"} for j in forward]
    if reverse is not None:
        result["reverse"] = [{"judgement": j, "evaluator": "test"} for j in reverse]
    return result


def run_import(path, *, project="proj", task="t2i", judge="ext-judge") -> dict:
    out = io.StringIO()
    call_command(
        "import_verdicts",
        str(path),
        project=project,
        task=task,
        judge=judge,
        json=True,
        stdout=out,
    )
    return json.loads(out.getvalue())


def import_error(path, **kwargs) -> str:
    with pytest.raises(CommandError) as excinfo:
        run_import(path, **kwargs)
    return str(excinfo.value)


def verdict(external_id: str, order: str, sample: int = 0, judge="ext-judge") -> Verdict:
    return Verdict.objects.get(
        judge__name=judge, pair__external_id=external_id, order=order, sample=sample
    )


def test_reverse_letter_is_flipped_to_canonical(project, tmp_path):
    path = write_predictions(
        tmp_path,
        {
            "p1": entry(forward=["A"], reverse=["B"]),  # consistent: A both times
            "p2": entry(forward=["B"], reverse=["A"]),  # consistent: B both times
            "p3": entry(forward=["A"], reverse=["A"]),  # position bias: first shown both times
        },
    )

    summary = run_import(path)

    assert verdict("p1", "forward").choice == "A"
    assert verdict("p1", "reverse").choice == "A"
    assert verdict("p2", "forward").choice == "B"
    assert verdict("p2", "reverse").choice == "B"
    assert verdict("p3", "forward").choice == "A"
    assert verdict("p3", "reverse").choice == "B"
    assert summary["verdicts"] == 6
    assert summary["pairs"] == 3
    assert summary["choices"] == {"A": 3, "B": 3, "tie": 0, "invalid": 0, "failed": 0}
    assert all(v.error == "" for v in Verdict.objects.all())


@pytest.mark.parametrize("empty", ["", "   ", None, "missing-key"])
def test_empty_judgement_is_a_failed_call(project, tmp_path, empty):
    item = {"evaluator": "test"} if empty == "missing-key" else {"judgement": empty}
    path = write_predictions(tmp_path, {"p1": {"forward": [item], "reverse": [{"judgement": "B"}]}})

    summary = run_import(path)

    failed = verdict("p1", "forward")
    assert failed.choice is None
    assert failed.error != ""
    assert verdict("p1", "reverse").choice == "A"
    assert summary["choices"]["failed"] == 1


@pytest.mark.parametrize("letter", ["C", "AB", "response 1", "0", 1])
def test_other_letters_are_invalid(project, tmp_path, letter):
    path = write_predictions(
        tmp_path, {"p1": {"forward": [{"judgement": letter}], "reverse": [{"judgement": letter}]}}
    )
    summary = run_import(path)
    assert verdict("p1", "forward").choice == "invalid"
    assert verdict("p1", "reverse").choice == "invalid"
    assert verdict("p1", "forward").error == ""
    assert summary["choices"]["invalid"] == 2


@pytest.mark.parametrize("word", ["tie", "Tie", "TIE", "same", "equal"])
def test_tie_words_are_ties_in_both_orders(project, tmp_path, word):
    path = write_predictions(tmp_path, {"p1": entry(forward=[word], reverse=[word])})
    run_import(path)
    assert verdict("p1", "forward").choice == "tie"
    assert verdict("p1", "reverse").choice == "tie"


def test_lowercase_and_padded_letters_are_read(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=[" a "], reverse=["b"])})
    run_import(path)
    assert verdict("p1", "forward").choice == "A"
    assert verdict("p1", "reverse").choice == "A"


def test_canonical_choice_function():
    assert canonical_choice("A", "forward") == ("A", "")
    assert canonical_choice("A", "reverse") == ("B", "")
    assert canonical_choice("B", "reverse") == ("A", "")
    assert canonical_choice("tie", "reverse") == ("tie", "")
    assert canonical_choice("X", "forward") == ("invalid", "")
    choice, error = canonical_choice("", "reverse")
    assert choice is None and error


def test_unknown_pair_id_is_named_and_nothing_written(project, tmp_path):
    path = write_predictions(
        tmp_path,
        {"p1": entry(forward=["A"], reverse=["B"]), "ghost-42": entry(forward=["A"])},
    )

    message = import_error(path)

    assert "ghost-42" in message
    assert "record 2" in message
    assert "nothing written" in message
    assert Verdict.objects.count() == 0
    assert JudgeRun.objects.count() == 0
    assert not Judge.objects.filter(name="ext-judge").exists()


def test_pair_of_another_task_is_an_error(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"]), "q1": entry(forward=["A"])})
    message = import_error(path, task="t2i")
    assert "'q1'" in message
    assert "t2i" in message
    assert Verdict.objects.count() == 0
    assert not Judge.objects.filter(name="ext-judge").exists()


def test_pair_of_another_project_is_unknown(project, tmp_path):
    images = tmp_path / "other-images"
    write_image(images / "a.png", (1, 1, 1))
    write_image(images / "b.png", (2, 2, 2))
    other = write_jsonl(tmp_path / "other.jsonl", [mmrb2_pair("elsewhere")])
    call_command(
        "import_pairs",
        str(other),
        project="other",
        task="t2i",
        images=str(images),
        stdout=io.StringIO(),
    )
    path = write_predictions(tmp_path, {"elsewhere": entry(forward=["A"])})
    message = import_error(path, project="proj", task="t2i")
    assert "'elsewhere'" in message
    assert Verdict.objects.count() == 0


def test_unknown_project_or_task_is_an_error(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"])})
    assert "'nope'" in import_error(path, project="nope")
    assert "'nope'" in import_error(path, task="nope")
    assert Verdict.objects.count() == 0


@pytest.mark.parametrize(
    "content",
    ["not json at all", "[]", "{}", '{"p1": ["A"]}', '{"p1": {"forward": "A"}}'],
)
def test_malformed_prediction_file_is_an_error(project, tmp_path, content):
    path = tmp_path / "predictions.json"
    path.write_text(content)
    import_error(path)
    assert Verdict.objects.count() == 0
    assert JudgeRun.objects.count() == 0


def test_reimport_updates_without_duplicating(project, tmp_path):
    first = write_predictions(
        tmp_path,
        {"p1": entry(forward=["A"], reverse=["B"]), "p2": entry(forward=["A"], reverse=["B"])},
        name="first.json",
    )
    run_import(first)
    assert Verdict.objects.count() == 4

    run_import(first)
    assert Verdict.objects.count() == 4

    second = write_predictions(
        tmp_path,
        {"p1": entry(forward=["B"], reverse=[""]), "p2": entry(forward=["A"], reverse=["B"])},
        name="second.json",
    )
    run_import(second)

    assert Verdict.objects.count() == 4
    assert verdict("p1", "forward").choice == "B"
    updated = verdict("p1", "reverse")
    assert updated.choice is None
    assert updated.error != ""
    assert json.loads(updated.raw_output) == {"judgement": "", "evaluator": "test"}
    # Every verdict now belongs to the latest run.
    latest = JudgeRun.objects.latest("id")
    assert latest.source == "second.json"
    assert set(Verdict.objects.values_list("run_id", flat=True)) == {latest.id}


def test_judge_created_as_external_when_missing(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"], reverse=["B"])})
    summary = run_import(path, judge="gpt-elsewhere")
    judge = Judge.objects.get(name="gpt-elsewhere")
    assert judge.backend == Judge.Backend.EXTERNAL
    assert summary["judge"] == "gpt-elsewhere"
    assert judge.verdicts.count() == 2
    run = JudgeRun.objects.get()
    assert (run.judge, run.project.slug, run.task.slug) == (judge, "proj", "t2i")
    assert run.status == JudgeRun.Status.FINISHED
    assert run.source == "predictions.json"


def test_existing_judge_is_reused_and_keeps_its_backend(project, tmp_path):
    own = Project.objects.get(slug="proj")  # the project's judge (never the operator's)
    Judge.objects.create(name="always-a", backend=Judge.Backend.ALWAYS_A, project=own)
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"], reverse=["B"])})
    run_import(path, judge="always-a")
    assert Judge.objects.count() == 1
    assert Judge.objects.get().backend == Judge.Backend.ALWAYS_A
    assert Verdict.objects.filter(judge__name="always-a").count() == 2


def test_verdicts_of_two_judges_are_separate(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"], reverse=["B"])})
    run_import(path, judge="one")
    run_import(path, judge="two")
    assert Verdict.objects.count() == 4
    assert Judge.objects.filter(name__in=["one", "two"]).count() == 2


def test_several_samples_are_indexed(project, tmp_path):
    path = write_predictions(
        tmp_path, {"p1": entry(forward=["A", "B", "A"], reverse=["B", "B", "A"])}
    )
    summary = run_import(path)
    assert summary["verdicts"] == 6
    assert [verdict("p1", "forward", s).choice for s in range(3)] == ["A", "B", "A"]
    assert [verdict("p1", "reverse", s).choice for s in range(3)] == ["A", "A", "B"]
    assert JudgeRun.objects.get().samples == 3


def test_missing_order_is_just_absent(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"])})
    run_import(path)
    assert list(Verdict.objects.values_list("order", flat=True)) == ["forward"]


def test_raw_output_is_kept(project, tmp_path):
    item = {"judgement": "B", "evaluator": "gpt", "metadata": {"reason": "sharper <b>image</b>"}}
    path = write_predictions(tmp_path, {"p1": {"forward": [item]}})
    run_import(path)
    assert json.loads(verdict("p1", "forward").raw_output) == item


def test_plain_output(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"], reverse=["B"])})
    out = io.StringIO()
    call_command("import_verdicts", str(path), project="proj", task="t2i", judge="j", stdout=out)
    assert out.getvalue().startswith("Imported 2 verdicts of j on 1 pairs of proj/t2i")


def test_service_raises_import_failed_with_record(project, tmp_path):
    path = write_predictions(tmp_path, {"p1": entry(forward=["A"]), "p2": {}, "nope": {}})
    with pytest.raises(ImportFailed) as excinfo:
        verdicts_import(path, project_slug="proj", task_slug="t2i", judge_name="x")
    assert excinfo.value.record == 3
    assert "'nope'" in str(excinfo.value)


def test_imported_verdicts_score_against_labels(project, tmp_path):
    """The report reads imported verdicts: a consistent judge on A-labelled pairs is right."""
    assert set(Pair.objects.filter(task__slug="t2i").values_list("label", flat=True)) == {"A"}
    path = write_predictions(
        tmp_path,
        {
            "p1": entry(forward=["A"], reverse=["B"]),  # right, right
            "p2": entry(forward=["B"], reverse=["A"]),  # wrong, wrong
            "p3": entry(forward=["A"], reverse=[""]),  # right, missing
        },
    )
    run_import(path, judge="ext")
    out = io.StringIO()
    call_command("report", project="proj", json=True, stdout=out)
    stats = json.loads(out.getvalue())["tasks"]["t2i"]["judges"]["ext"]
    assert stats["correct"] == 3
    assert stats["evaluated"] == 5
    assert stats["missing"] == 1
    assert stats["accuracy"] == pytest.approx(0.6)


def test_an_imported_file_shows_up_like_a_run(project, tmp_path):
    from judging.selectors import run_progress

    predictions = {
        "p1": entry(["A"], ["A"]),
        "p2": entry(["B", "tie"], ["maybe", ""]),
    }
    run_import(write_predictions(tmp_path, predictions))
    run = JudgeRun.objects.get(purpose="import")
    progress = run_progress(run)
    assert (run.status, run.trials) == ("finished", 6)
    assert (progress.answered, progress.ties, progress.invalid, progress.failed) == (3, 1, 1, 1)


@pytest.mark.parametrize("text", ["A\u0000", "\udc80"])
def test_text_no_database_stores_is_refused_before_anything_is_written(project, tmp_path, text):
    predictions = {
        "p1": {"forward": [{"judgement": "A"}], "reverse": []},
        "p2": {"forward": [{"judgement": "B", "reasoning": text}], "reverse": []},
    }
    with pytest.raises(ImportFailed, match="record 2"):
        verdicts_import(
            write_predictions(tmp_path, predictions),
            project_slug=project,
            task_slug="t2i",
            judge_name="j",
        )
    assert not Verdict.objects.exists()
    assert not Judge.objects.filter(name="j").exists()
