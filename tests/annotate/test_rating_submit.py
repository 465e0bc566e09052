"""Submitting ratings: orientation, validation, idempotency, edits and the N-th rating."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Adjudication, AspectScore, Assignment, Rating
from annotation.services.adjudication import pair_adjudicate
from annotation.services.assignments import AssignmentClosed, assignment_claim
from annotation.services.ratings import RatingInput, RatingInvalid, rating_submit
from content.models import Pair
from projects.scale import to_canonical
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("form", "swapped", "canonical"),
    [(1, False, 7), (7, False, 1), (4, False, 4), (1, True, 1), (7, True, 7), (2, True, 2)],
)
def test_left_right_scores_become_canonical(form, swapped, canonical):
    # Not swapped: A is on the left, so "Left much better" (1) means A much better (7).
    assert to_canonical(form, 7, swapped) == canonical
    assert to_canonical(canonical, 7, swapped) == form


def test_scores_are_stored_canonically_whatever_side_a_was_on(task, annotators):
    user = annotators[0]
    assignment = assignment_claim(user, task)
    Assignment.objects.filter(pk=assignment.pk).update(swapped=True)  # B on the left
    rating_submit(
        assignment.pk,
        user,
        RatingInput(overall=2, aspects={"faithfulness": 1, "quality": 6}, active_seconds=12.5),
    )
    rating = Rating.objects.get(assignment=assignment)
    assert (rating.overall, rating.scale, rating.active_seconds) == (2, 7, 12.5)
    scores = dict(AspectScore.objects.filter(rating=rating).values_list("aspect", "score"))
    assert scores == {"faithfulness": 1, "quality": 6}


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (RatingInput(overall=None), "overall"),
        (RatingInput(overall=""), "overall"),
        (RatingInput(overall=8), "overall"),
        (RatingInput(overall="x"), "overall"),
        (RatingInput(overall=3, aspects={"made_up": 2}), "aspect_made_up"),
        (RatingInput(overall=3, aspects={"quality": 0}), "aspect_quality"),
        (RatingInput(overall=3, active_seconds="nan"), "active_seconds"),
        (RatingInput(overall=3, active_seconds="soon"), "active_seconds"),
        (RatingInput(overall=3, rationale="x" * 10_001), "rationale"),
    ],
)
def test_bad_input_is_refused_with_the_field_named_and_nothing_stored(
    task, annotators, data, field
):
    user = annotators[0]
    assignment = assignment_claim(user, task)
    with pytest.raises(RatingInvalid) as refused:
        rating_submit(assignment.pk, user, data)
    assert field in refused.value.errors
    assert not Rating.objects.exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.LEASED


def test_active_time_is_clamped_and_falls_back_to_the_time_since_the_claim(task, annotators):
    user = annotators[0]
    first = assignment_claim(user, task)
    rating_submit(first.pk, user, RatingInput(overall=3, active_seconds=10**9))
    assert Rating.objects.get(assignment=first).active_seconds == 6 * 3600
    second = assignment_claim(user, task)
    rating_submit(second.pk, user, RatingInput(overall=3))  # no JavaScript: no client time
    assert 0 <= Rating.objects.get(assignment=second).active_seconds < 60


def test_a_repeated_submit_stores_one_rating(task, annotators):
    user = annotators[0]
    assignment = assignment_claim(user, task)
    for _ in range(3):
        rating_submit(assignment.pk, user, RatingInput(overall=6, active_seconds=4))
    assert Rating.objects.filter(pair=assignment.pair).count() == 1
    pair = Pair.objects.get(pk=assignment.pair_id)
    assert (pair.status, pair.rating_count) == (Pair.Status.IN_PROGRESS, 1)


def test_an_open_pair_rating_can_be_changed_and_time_adds_up(task, annotators):
    user = annotators[0]
    assignment = assignment_claim(user, task)
    rating_submit(
        assignment.pk, user, RatingInput(overall=6, aspects={"quality": 2}, active_seconds=5)
    )
    rating_submit(
        assignment.pk, user, RatingInput(overall=1, rationale="changed", active_seconds=3)
    )
    rating = Rating.objects.get(assignment=assignment)
    canonical = to_canonical(1, 7, assignment.swapped)
    assert (rating.overall, rating.rationale, rating.active_seconds) == (canonical, "changed", 8)
    assert not rating.aspect_scores.exists()


def _fill(task, annotators, pair, form_scores):
    """Give `pair` one rating per form score, straight A-left orientation."""
    assignments = []
    for user, score in zip(annotators, form_scores, strict=False):
        assignment = Assignment.objects.create(pair=pair, annotator=user, swapped=False)
        rating_submit(assignment.pk, user, RatingInput(overall=score))
        assignments.append(assignment)
    return assignments


def test_the_nth_rating_decides_the_pair_in_the_same_submit(task, annotators):
    pair = Pair.objects.filter(task=task).first()
    _fill(task, annotators, pair, [1, 2, 2])  # canonical 7, 6, 6: A clearly better
    pair.refresh_from_db()
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "A", "consensus")
    assert (pair.rating_count, pair.consensus_span) == (3, 1)
    assert pair.consensus_mean == pytest.approx(19 / 3)


@pytest.mark.parametrize(
    ("form_scores", "reason"),
    [([1, 7, 4], "span 6 above the max span 4"), ([3, 4, 5], "mean at the centre")],
)
def test_a_disagreeing_or_ambiguous_pair_is_dropped(task, annotators, form_scores, reason):
    pair = Pair.objects.filter(task=task).first()
    _fill(task, annotators, pair, form_scores)
    pair.refresh_from_db()
    assert pair.status == Pair.Status.DROPPED, reason


def test_after_the_grace_period_a_complete_pairs_ratings_are_final_but_a_repeat_is_harmless(
    task, annotators
):
    pair = Pair.objects.filter(task=task).first()
    first, *_ = _fill(task, annotators, pair, [1, 2, 2])
    user = annotators[0]
    later = timezone.now() + timedelta(minutes=task.project.edit_grace_minutes, seconds=1)
    rating_submit(first.pk, user, RatingInput(overall=1), now=later)  # the same: no change
    with pytest.raises(AssignmentClosed, match="complete"):
        rating_submit(first.pk, user, RatingInput(overall=5), now=later)
    assert Rating.objects.get(assignment=first).overall == 7
    assert Rating.objects.filter(pair=pair).count() == 3


def test_within_the_grace_period_a_slip_on_a_complete_pair_is_corrected_and_re_decides_it(
    task, annotators
):
    pair = Pair.objects.filter(task=task).first()
    first, *_ = _fill(task, annotators, pair, [1, 2, 2])  # canonical 7, 6, 6: kept, A
    pair.refresh_from_db()
    assert (pair.status, pair.label) == ("kept", "A")
    # The first annotator meant "Right much better" (canonical 1): span 5 > max span 4.
    rating_submit(first.pk, annotators[0], RatingInput(overall=7))
    assert Rating.objects.get(assignment=first).overall == 1
    pair.refresh_from_db()
    assert (pair.status, pair.decided_by, pair.consensus_span) == ("dropped", "consensus", 5)


def test_no_grace_when_the_project_sets_none(task, annotators):
    task.project.edit_grace_minutes = 0
    task.project.save(update_fields=["edit_grace_minutes"])
    pair = Pair.objects.filter(task=task).first()
    first, *_ = _fill(task, annotators, pair, [1, 2, 2])
    with pytest.raises(AssignmentClosed, match="complete"):
        rating_submit(first.pk, annotators[0], RatingInput(overall=5))


def test_an_adjudicated_pair_locks_its_ratings_even_within_the_grace_period(task, annotators):
    lead = member("lead", task.project, role="lead")
    pair = Pair.objects.filter(task=task).first()
    first, *_ = _fill(task, annotators, pair, [1, 7, 4])  # dropped: span 6
    pair_adjudicate(pair.pk, lead, Adjudication.Decision.KEEP_A, "A is right")
    with pytest.raises(AssignmentClosed, match="complete"):
        rating_submit(first.pk, annotators[0], RatingInput(overall=5))
    pair.refresh_from_db()
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "A", "adjudication")
