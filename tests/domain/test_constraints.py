"""The database itself enforces the invariants of docs/architecture.md §4 (constraints, not
`save()`)."""

import itertools

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from annotation.models import AspectScore, Assignment, Rating
from content.models import Generator, Pair, Prompt, Response
from judging.models import Judge, Verdict
from projects.models import Project, Task

pytestmark = pytest.mark.django_db

_counter = itertools.count()


def make_pair(project=None, external_id=None, **fields) -> Pair:
    """A project (K = 7 unless given), task, prompt, two responses of one generator, a pair."""
    n = next(_counter)
    if project is None:
        project = Project.objects.create(slug=f"proj-{n}", name=f"Project {n}")
    task, _ = Task.objects.get_or_create(project=project, slug="t2i", defaults={"name": "T2I"})
    prompt = Prompt.objects.create(project=project, fingerprint=f"fp-{n}")
    generator, _ = Generator.objects.get_or_create(name="gen")
    response_a = Response.objects.create(generator=generator, content=[["text", "a"]])
    response_b = Response.objects.create(generator=generator, content=[["text", "b"]])
    return Pair.objects.create(
        project=project,
        task=task,
        external_id=external_id or f"pair-{n}",
        prompt=prompt,
        response_a=response_a,
        response_b=response_b,
        **fields,
    )


def make_user(name=None):
    return get_user_model().objects.create_user(name or f"user-{next(_counter)}")


def make_rating(pair, user=None, overall=5, scale=7, assignment=None) -> Rating:
    user = user or make_user()
    assignment = assignment or Assignment.objects.create(pair=pair, annotator=user)
    return Rating.objects.create(
        assignment=assignment, pair=pair, annotator=user, scale=scale, overall=overall
    )


def assert_rejected(create):
    with pytest.raises(IntegrityError), transaction.atomic():
        create()


def test_external_id_unique_per_project():
    pair = make_pair(external_id="same")
    assert_rejected(lambda: make_pair(project=pair.project, external_id="same"))
    # the same id in another project is fine
    other = make_pair(external_id="same")
    assert other.project != pair.project
    assert Pair.objects.filter(external_id="same").count() == 2


def test_one_rating_per_assignment():
    pair = make_pair()
    rating = make_rating(pair)
    # same assignment, other annotator column: only the one-to-one stops it
    assert_rejected(
        lambda: Rating.objects.create(
            assignment=rating.assignment, pair=pair, annotator=make_user(), scale=7, overall=3
        )
    )
    assert Rating.objects.count() == 1


def test_one_assignment_per_pair_and_annotator():
    pair = make_pair()
    user = make_user()
    Assignment.objects.create(pair=pair, annotator=user)
    assert_rejected(lambda: Assignment.objects.create(pair=pair, annotator=user))
    # another annotator, or the same annotator on another pair, is fine
    Assignment.objects.create(pair=pair, annotator=make_user())
    Assignment.objects.create(pair=make_pair(project=pair.project), annotator=user)
    assert Assignment.objects.count() == 3


def test_verdict_unique_on_judge_pair_order_sample():
    pair = make_pair()
    judge = Judge.objects.create(name="j", backend="always-a")
    Verdict.objects.create(judge=judge, pair=pair, order="forward", sample=0, choice="A")
    assert_rejected(
        lambda: Verdict.objects.create(
            judge=judge, pair=pair, order="forward", sample=0, choice="B"
        )
    )
    # another order, sample or judge is another trial
    Verdict.objects.create(judge=judge, pair=pair, order="reverse", sample=0, choice="A")
    Verdict.objects.create(judge=judge, pair=pair, order="forward", sample=1, choice="A")
    other = Judge.objects.create(name="k", backend="always-a")
    Verdict.objects.create(judge=other, pair=pair, order="forward", sample=0, choice="A")
    assert Verdict.objects.count() == 4


@pytest.mark.parametrize("overall", [0, 8])
def test_rating_overall_outside_scale_rejected(overall):
    pair = make_pair()
    assert_rejected(lambda: make_rating(pair, overall=overall, scale=7))
    assert Rating.objects.count() == 0


@pytest.mark.parametrize("overall", [1, 7])
def test_rating_overall_on_scale_edges_accepted(overall):
    make_rating(make_pair(), overall=overall, scale=7)


@pytest.mark.parametrize("score", [0, 7])
def test_aspect_score_outside_scale_rejected(score):
    rating = make_rating(make_pair(), scale=6, overall=4)
    assert_rejected(
        lambda: AspectScore.objects.create(rating=rating, aspect="quality", scale=6, score=score)
    )
    AspectScore.objects.create(rating=rating, aspect="quality", scale=6, score=6)
    AspectScore.objects.create(rating=rating, aspect="faithfulness", scale=6, score=1)


def test_aspect_score_unique_per_rating_and_aspect():
    rating = make_rating(make_pair())
    AspectScore.objects.create(rating=rating, aspect="quality", scale=7, score=3)
    assert_rejected(
        lambda: AspectScore.objects.create(rating=rating, aspect="quality", scale=7, score=4)
    )


def test_verdict_choice_xor_error():
    pair = make_pair()
    judge = Judge.objects.create(name="j", backend="always-a")

    def verdict(sample, **fields):
        return Verdict.objects.create(
            judge=judge, pair=pair, order="forward", sample=sample, **fields
        )

    assert_rejected(lambda: verdict(0, choice="A", error="timeout"))  # both
    assert_rejected(lambda: verdict(0, choice=None, error=""))  # neither
    verdict(0, choice="A")
    verdict(1, choice=None, error="timeout")
    assert_rejected(lambda: verdict(2, choice="maybe"))  # not a choice


def test_pair_with_the_same_response_twice_rejected():
    pair = make_pair()
    assert_rejected(
        lambda: Pair.objects.create(
            project=pair.project,
            task=pair.task,
            external_id="same-response",
            prompt=pair.prompt,
            response_a=pair.response_a,
            response_b=pair.response_a,
        )
    )


def test_pair_invalid_status_rejected():
    assert_rejected(lambda: make_pair(status="bogus"))
    pair = make_pair()
    assert_rejected(lambda: Pair.objects.filter(pk=pair.pk).update(status="finished"))
    pair.refresh_from_db()
    assert pair.status == "candidate"


def test_pair_invalid_label_rejected():
    assert_rejected(lambda: make_pair(label="C"))
    assert_rejected(lambda: make_pair(reference_label="X"))


@pytest.mark.parametrize("scale", [0, 1, 12])
def test_project_scale_outside_2_11_rejected(scale):
    assert_rejected(lambda: Project.objects.create(slug="bad", name="bad", scale_points=scale))


@pytest.mark.parametrize("scale", [2, 11])
def test_project_scale_edges_accepted(scale):
    Project.objects.create(slug=f"ok-{scale}", name="ok", scale_points=scale)


def test_annotator_day_one_row_per_annotator_and_day_and_no_negative_count():
    from datetime import date

    from annotation.models import AnnotatorDay

    project = make_pair().project
    user = get_user_model().objects.create_user("day-counter")
    AnnotatorDay.objects.create(project=project, annotator=user, day=date(2026, 12, 2), ratings=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        AnnotatorDay.objects.create(project=project, annotator=user, day=date(2026, 12, 2))
    with pytest.raises(IntegrityError), transaction.atomic():
        AnnotatorDay.objects.create(
            project=project, annotator=user, day=date(2026, 12, 3), ratings=-1
        )
