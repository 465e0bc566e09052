"""`manage.py report --project P --json` (docs/architecture.md §7) on a small project built
with the ORM."""

import io
import itertools
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import AspectScore, Assignment, Rating
from annotation.services.consensus import pairs_decide
from content.models import Generator, Pair, Prompt, Response
from judging.models import Judge, Verdict
from metrics.report import project_agreement, project_report
from projects.models import Project, Task

pytestmark = pytest.mark.django_db

_counter = itertools.count()


def add_pair(task: Task, scores=(), status=Pair.Status.QUEUED, aspect=None) -> Pair:
    """A pair of `task` rated by annotators user-0, user-1, ... with the given overall scores
    (and the same scores on `aspect` when given)."""
    n = next(_counter)
    generator, _ = Generator.objects.get_or_create(name=f"gen-{n % 2}")
    pair = Pair.objects.create(
        project=task.project,
        task=task,
        external_id=f"{task.slug}-{n}",
        prompt=Prompt.objects.create(project=task.project, fingerprint=f"fp-{n}"),
        response_a=Response.objects.create(generator=generator, content=[["text", "a"]]),
        response_b=Response.objects.create(generator=generator, content=[["text", "b"]]),
        status=status,
    )
    scale = task.project.scale_points
    for i, score in enumerate(scores):
        user, _ = get_user_model().objects.get_or_create(username=f"user-{i}")
        assignment = Assignment.objects.create(
            pair=pair, annotator=user, status=Assignment.Status.SUBMITTED
        )
        rating = Rating.objects.create(
            assignment=assignment, pair=pair, annotator=user, scale=scale, overall=score
        )
        if aspect:
            AspectScore.objects.create(rating=rating, aspect=aspect, scale=scale, score=score)
    return pair


def add_verdict(judge, pair, order, choice, sample=0):
    error = "" if choice is not None else "HTTP 503 after 5 attempts"
    return Verdict.objects.create(
        judge=judge, pair=pair, order=order, sample=sample, choice=choice, error=error
    )


def decide(project):
    pairs_decide(list(Pair.objects.filter(project=project)), project)


def run_report(slug) -> dict:
    out = io.StringIO()
    call_command("report", project=slug, json=True, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def project():
    """K = 7 (centre 4, band [3.5, 4.5]), N = 3, max span 4.

    t2i:  p1 [6,7,6] mean 6.33 kept A | p2 [1,2,2] mean 1.67 kept B | p3 [3,4,5] mean 4 dropped
          p4 [6,6] (2 < N) queued     | p5 no ratings, candidate
    edit: q1 [5,5,6] mean 5.33 kept A | q2 [1,7,7] span 6 dropped   | q3 [2,4,3] mean 3 kept B
          q4 easy (removed by the ensemble)
    """
    project = Project.objects.create(
        slug="bench", name="Bench", scale_points=7, annotators_per_pair=3
    )
    t2i = Task.objects.create(project=project, slug="t2i", name="T2I", kind="t2i")
    edit = Task.objects.create(project=project, slug="edit", name="Edit", kind="edit")
    p = {
        "p1": add_pair(t2i, [6, 7, 6]),
        "p2": add_pair(t2i, [1, 2, 2]),
        "p3": add_pair(t2i, [3, 4, 5]),
        "p4": add_pair(t2i, [6, 6]),
        "p5": add_pair(t2i, [], status=Pair.Status.CANDIDATE),
        "q1": add_pair(edit, [5, 5, 6], aspect="quality"),
        "q2": add_pair(edit, [1, 7, 7]),
        "q3": add_pair(edit, [2, 4, 3], aspect="quality"),
        "q4": add_pair(edit, [], status=Pair.Status.EASY),
    }
    decide(project)

    x = Judge.objects.create(name="judge-x", backend="external")
    y = Judge.objects.create(name="judge-y", backend="external")
    # judge-x, t2i: p1 A/A correct, p2 forward B correct, p2 reverse failed call (missing),
    # p3 (dropped, no label) ignored.
    add_verdict(x, p["p1"], "forward", "A")
    add_verdict(x, p["p1"], "reverse", "A")
    add_verdict(x, p["p2"], "forward", "B")
    add_verdict(x, p["p2"], "reverse", None)
    add_verdict(x, p["p3"], "forward", "A")
    # judge-x, edit: q1 tie (wrong) / A (correct), q3 B (correct) / A (wrong).
    add_verdict(x, p["q1"], "forward", "tie")
    add_verdict(x, p["q1"], "reverse", "A")
    add_verdict(x, p["q3"], "forward", "B")
    add_verdict(x, p["q3"], "reverse", "A")
    # judge-y, t2i only: p1 B/B (both wrong, consistent), p2 invalid (wrong) / B (correct).
    add_verdict(y, p["p1"], "forward", "B")
    add_verdict(y, p["p1"], "reverse", "B")
    add_verdict(y, p["p2"], "forward", "invalid")
    add_verdict(y, p["p2"], "reverse", "B")
    return project


def test_pairs_decide_sets_the_statuses(project):
    statuses = dict(Pair.objects.filter(project=project).values_list("external_id", "status"))
    labels = dict(Pair.objects.filter(project=project).values_list("external_id", "label"))
    by_task = sorted(statuses.items(), key=lambda item: int(item[0].rsplit("-", 1)[1]))
    assert [status for _, status in by_task] == [
        "kept", "kept", "dropped", "queued", "candidate", "kept", "dropped", "kept", "easy",
    ]  # fmt: skip
    assert [labels[external_id] for external_id, _ in by_task] == [
        "A", "B", "", "", "", "A", "A", "B", "",
    ]  # fmt: skip


def _is_fraction(value):
    return value is None or (isinstance(value, float) and 0.0 <= value <= 1.0)


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def test_report_json_shape(project):
    report = run_report("bench")
    assert {"project", "tasks", "judges"} <= report.keys()
    assert report["project"] == "bench"
    assert set(report["tasks"]) == {"t2i", "edit"}
    for task in report["tasks"].values():
        assert {"pairs", "kept", "dropped", "pending", "agreement", "judges"} <= task.keys()
        for key in ("pairs", "kept", "dropped", "pending"):
            assert _is_count(task[key])
        agreement = task["agreement"]
        assert {
            "alpha_ordinal",
            "alpha_interval",
            "unanimous_direction",
            "rater_label_agreement",
            "ratings",
        } <= agreement.keys()
        for key in ("alpha_ordinal", "alpha_interval"):
            assert agreement[key] is None or isinstance(agreement[key], float)
        assert _is_fraction(agreement["unanimous_direction"])
        assert _is_fraction(agreement["rater_label_agreement"])
        assert _is_count(agreement["ratings"])
        for stats in task["judges"].values():
            keys = {"accuracy", "correct", "evaluated", "missing", "invalid", "ties"}
            assert keys | {"position_consistency"} <= stats.keys()
            assert isinstance(stats["accuracy"], float) and _is_fraction(stats["accuracy"])
            for key in ("correct", "evaluated", "missing", "invalid", "ties"):
                assert _is_count(stats[key])
            assert _is_fraction(stats["position_consistency"])
    assert set(report["judges"]) == {"judge-x", "judge-y"}
    for judge in report["judges"].values():
        assert _is_fraction(judge["average"])
        assert _is_count(judge["tasks"]) and judge["tasks"] <= judge["labelled_tasks"]


def test_report_counts(project):
    tasks = run_report("bench")["tasks"]
    t2i, edit = tasks["t2i"], tasks["edit"]
    # t2i: 5 pairs, kept p1 p2, dropped p3, pending p4 (queued) + p5 (candidate)
    assert (t2i["pairs"], t2i["kept"], t2i["dropped"], t2i["pending"]) == (5, 2, 1, 2)
    # edit: 4 pairs, kept q1 q3, dropped q2, q4 easy is not pending
    assert (edit["pairs"], edit["kept"], edit["dropped"], edit["pending"]) == (4, 2, 1, 0)


def test_report_agreement(project):
    tasks = run_report("bench")["tasks"]
    t2i, edit = tasks["t2i"]["agreement"], tasks["edit"]["agreement"]
    assert t2i["ratings"] == 11  # 3 + 3 + 3 + 2
    assert edit["ratings"] == 9
    # t2i units [6,7,6] [1,2,2] [3,4,5] [6,6]: n_1..n_7 = 1,2,1,1,1,4,1 (n = 11).
    # interval: sum o d = 2 + 2 + 6 + 0 = 10, sum n n d = 936 -> 1 - 10 * 10/936 = 209/234.
    # ordinal: sum o d = 23, sum n n d = 2299 -> 1 - 10 * 23/2299 = 2069/2299.
    assert t2i["alpha_interval"] == pytest.approx(209 / 234, abs=1e-6)
    assert t2i["alpha_ordinal"] == pytest.approx(2069 / 2299, abs=1e-6)
    # edit units [5,5,6] [1,7,7] [2,4,3]: n_1..n_7 = 1,1,1,1,2,1,2 (n = 9).
    # interval: sum o d = (4 * 1 + 4 * 36 + 2 * 4 + 2 * 1 + 2 * 1) / 2 = 80, sum n n d = 652
    #   -> 1 - 8 * 80/652 = 3/163.  ordinal: sum o d = 123, sum n n d = 1062 -> 13/177.
    assert edit["alpha_interval"] == pytest.approx(3 / 163, abs=1e-6)
    assert edit["alpha_ordinal"] == pytest.approx(13 / 177, abs=1e-6)
    # unanimous (complete pairs only): t2i p1 yes, p2 yes, p3 no -> 2/3;
    # edit q1 yes, q2 no, q3 (centre 4 among B) no -> 1/3
    assert t2i["unanimous_direction"] == pytest.approx(2 / 3, abs=1e-6)
    assert edit["unanimous_direction"] == pytest.approx(1 / 3, abs=1e-6)
    # rater/label over kept pairs: t2i 6 of 6; edit q1 3 of 3, q3 2 of 3 (4 is the centre)
    assert t2i["rater_label_agreement"] == 1.0
    assert edit["rater_label_agreement"] == pytest.approx(5 / 6, abs=1e-6)
    # aspects (an extra key): "quality" rated on q1 and q3 only
    assert edit["aspects"]["quality"]["ratings"] == 6
    assert t2i["aspects"] == {}


def test_report_judges(project):
    report = run_report("bench")
    t2i, edit = report["tasks"]["t2i"]["judges"], report["tasks"]["edit"]["judges"]
    x_t2i = t2i["judge-x"]
    # 3 evaluated trials (p2 reverse failed), all correct; expected 2 pairs * 2 orders = 4
    assert {k: x_t2i[k] for k in ("correct", "evaluated", "missing", "invalid", "ties")} == {
        "correct": 3, "evaluated": 3, "missing": 1, "invalid": 0, "ties": 0,
    }  # fmt: skip
    assert x_t2i["accuracy"] == 1.0
    assert x_t2i["position_consistency"] == 1.0  # only p1 has both orders: A = A
    x_edit = edit["judge-x"]
    assert {k: x_edit[k] for k in ("correct", "evaluated", "missing", "invalid", "ties")} == {
        "correct": 2, "evaluated": 4, "missing": 0, "invalid": 0, "ties": 1,
    }  # fmt: skip
    assert x_edit["accuracy"] == 0.5
    assert x_edit["position_consistency"] == 0.0  # q1 tie/A, q3 B/A
    y_t2i = t2i["judge-y"]
    assert {k: y_t2i[k] for k in ("correct", "evaluated", "missing", "invalid", "ties")} == {
        "correct": 1, "evaluated": 4, "missing": 0, "invalid": 1, "ties": 0,
    }  # fmt: skip
    assert y_t2i["accuracy"] == 0.25
    assert y_t2i["position_consistency"] == 0.5  # p1 B/B consistent, p2 invalid/B not
    # multi-task figure: mean of the task accuracies, over both tasks with labelled pairs
    assert report["judges"]["judge-x"]["average"] == pytest.approx(0.75)
    assert report["judges"]["judge-x"]["tasks"] == report["judges"]["judge-x"]["labelled_tasks"]


def test_report_average_is_undefined_for_a_judge_missing_a_task(project):
    """judge-y answered on t2i only: 0.25 there is not an average over the two tasks."""
    report = run_report("bench")
    assert report["tasks"]["t2i"]["judges"]["judge-y"]["accuracy"] == 0.25
    assert "judge-y" not in report["tasks"]["edit"]["judges"]
    assert report["judges"]["judge-y"] == {
        "average": None, "tasks": 1, "labelled_tasks": 2, "prediction_powered": None,
    }  # fmt: skip
    # A task without labelled pairs is not held against anyone.
    other = Task.objects.create(project=project, slug="reasoning", name="R", kind="reasoning")
    add_pair(other, [], status=Pair.Status.CANDIDATE)
    judges = run_report("bench")["judges"]
    assert judges["judge-x"] == {
        "average": pytest.approx(0.75),
        "tasks": 2,
        "labelled_tasks": 2,
        "prediction_powered": None,
    }  # fmt: skip  (no prediction-powered figure below 50 rated pairs a task)


def test_report_text_output(project):
    out = io.StringIO()
    call_command("report", project="bench", stdout=out)
    text = out.getvalue()
    assert "t2i: 5 pairs, 2 kept, 1 dropped, 2 pending" in text
    assert "judge-x: average 75.0 % (2 of 2 tasks with labelled pairs)" in text
    assert "judge-y: average — (1 of 2 tasks with labelled pairs)" in text


def test_report_without_ratings():
    project = Project.objects.create(slug="empty", name="Empty")
    task = Task.objects.create(project=project, slug="t2i", name="T2I", kind="t2i")
    add_pair(task, [])
    add_pair(task, [], status=Pair.Status.CANDIDATE)
    report = run_report("empty")
    entry = report["tasks"]["t2i"]
    assert (entry["pairs"], entry["kept"], entry["dropped"], entry["pending"]) == (2, 0, 0, 2)
    assert entry["agreement"]["ratings"] == 0
    for key in ("alpha_ordinal", "alpha_interval", "unanimous_direction", "rater_label_agreement"):
        assert entry["agreement"][key] is None
    assert entry["judges"] == {}
    assert report["judges"] == {}


def test_report_single_value_agreement_is_null():
    project = Project.objects.create(slug="same", name="Same")
    task = Task.objects.create(project=project, slug="t2i", name="T2I", kind="t2i")
    add_pair(task, [6, 6, 6])
    add_pair(task, [6, 6, 6])
    decide(project)
    agreement = run_report("same")["tasks"]["t2i"]["agreement"]
    assert agreement["alpha_ordinal"] is None
    assert agreement["alpha_interval"] is None
    assert agreement["unanimous_direction"] == 1.0
    assert agreement["rater_label_agreement"] == 1.0


def test_report_project_without_tasks():
    Project.objects.create(slug="bare", name="Bare")
    report = run_report("bare")
    assert report["tasks"] == {}
    assert report["judges"] == {}


def test_report_unknown_project():
    with pytest.raises(CommandError, match="nope"):
        call_command("report", project="nope", json=True, stdout=io.StringIO())


def test_report_query_count_does_not_grow(project, django_assert_num_queries):
    with CaptureQueriesContext(connection) as small:
        project_report(project)
    baseline = len(small.captured_queries)

    # more pairs, another task, aspect scores and two more judges (one with 3 samples)
    other = Task.objects.create(project=project, slug="reasoning", name="R", kind="reasoning")
    pairs = [add_pair(other, [7, 6, 7], aspect="quality") for _ in range(4)]
    pairs += [add_pair(project.tasks.get(slug="t2i"), [1, 1, 2]) for _ in range(3)]
    decide(project)
    for name in ("judge-z", "judge-w"):
        judge = Judge.objects.create(name=name, backend="external")
        for pair in pairs:
            for order in ("forward", "reverse"):
                for sample in range(3 if name == "judge-z" else 1):
                    add_verdict(judge, pair, order, "A", sample=sample)

    with django_assert_num_queries(baseline):
        report = project_report(project)
    assert len(report["judges"]) == 4
    assert report["tasks"]["reasoning"]["pairs"] == 4


def test_report_query_budget(project, django_assert_max_num_queries):
    # 8; 4 for the annotators' quality figures (their ratings, gold answers, pauses,
    # qualifications) and 1 for their names; 2 for the judges' bias cards (the evaluated pairs'
    # traits, the judges' models); 2 for the prediction-powered figures (the verdicts on the
    # pool, the pool's draws and decisions): flat in pairs, annotators and judges.
    with django_assert_max_num_queries(17):
        project_report(project)


def test_report_survives_a_scale_changed_after_rating(project):
    """The admin lets a lead change K of a project that already has ratings (each rating keeps
    its own `scale`). The report must still answer, not crash on a score above the new K."""
    Project.objects.filter(pk=project.pk).update(scale_points=5)
    project.refresh_from_db()
    report = run_report("bench")
    assert report["tasks"]["t2i"]["agreement"]["ratings"] == 11


def test_project_agreement_is_the_reports_agreement_without_reading_verdicts(project):
    report = project_report(project)
    with CaptureQueriesContext(connection) as queries:
        figures = project_agreement(project)
    assert figures == {slug: task["agreement"] for slug, task in report["tasks"].items()}
    assert any(task["judges"] for task in report["tasks"].values()), "the fixture has verdicts"
    assert not any("judging_verdict" in query["sql"] for query in queries.captured_queries)


def test_the_report_carries_each_judges_bias_cards(project):
    judges = run_report("bench")["tasks"]["t2i"]["judges"]
    x, y = judges["judge-x"]["bias_cards"], judges["judge-y"]["bias_cards"]
    assert set(x) == {"length", "self_preference", "experts"}
    # Both responses of every pair are one character of text by the same generator.
    assert x["length"]["text"]["pairs"] == 0 and x["self_preference"]["pairs"] == 0
    # The three raters all put p1 on A and p2 on B; judge-x says A then B, judge-y B, B.
    assert x["experts"]["per_expert"] == {
        f"user-{i}": {"agreement": 1.0, "pairs": 2} for i in range(3)
    }
    assert (x["experts"]["experts_vs_experts"], x["experts"]["as_good_as_an_expert"]) == (1.0, True)
    assert y["experts"]["judge_vs_experts"] == 0.5
    assert y["experts"]["as_good_as_an_expert"] is False


def test_the_judges_page_shows_each_judges_bias_cards_with_their_n(project, client):
    """The page's bias-card row carries the report's figures and counts."""
    from django.urls import reverse

    from projects.models import Membership, Project
    from tests.factories import member

    cards = run_report("bench")["tasks"]["t2i"]["judges"]["judge-y"]["bias_cards"]
    client.force_login(
        member("cardlead", Project.objects.get(slug="bench"), role=Membership.Role.LEAD)
    )
    html = client.get(reverse("dash-judges", args=["bench"])).content.decode()
    start = html.index("Bias cards:")
    row = html[html.index("<td>judge-y</td>", start) :].split("</tr>")[0]
    text = cards["length"]["text"]["pairs"]
    if text:
        assert f"n={text}" in row
    else:  # a card with no pair reads "—", not "— (—) n=0"
        assert '<td class="num">—</td>' in row and "n=0" not in row
    assert f"{cards['experts']['judge_vs_experts']:.3f}" in row  # 0.500
    assert f"{len(cards['experts']['per_expert'])} experts" in row
    assert row.rstrip().endswith("<td>no</td>")  # not as good as an expert
