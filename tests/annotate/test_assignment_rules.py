"""The assignment rules of docs/architecture.md §5.4, through the services."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Flag, Rating
from annotation.services.assignments import (
    AssignmentClosed,
    AssignmentNotFound,
    assignment_claim,
    assignment_flag,
    assignment_skip,
)
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def rate(user, task, overall=6, **kwargs):
    assignment = assignment_claim(user, task, **kwargs)
    assert assignment is not None, f"{user} got no pair"
    rating_submit(assignment.pk, user, RatingInput(overall=overall), **kwargs)
    return assignment


def test_a_claim_is_leased_and_claiming_again_resumes_it(task, annotators):
    user = annotators[0]
    first = assignment_claim(user, task)
    assert first.status == Assignment.Status.LEASED
    lease = timedelta(minutes=task.project.lease_minutes)
    assert abs(first.lease_expires_at - (timezone.now() + lease)) < timedelta(seconds=5)
    assert assignment_claim(user, task).pk == first.pk
    assert Assignment.objects.filter(annotator=user).count() == 1


def test_every_pair_gets_exactly_n_distinct_annotators(task, annotators):
    for user in annotators:
        while (assignment := assignment_claim(user, task)) is not None:
            rating_submit(assignment.pk, user, RatingInput(overall=6))
    pairs = Pair.objects.filter(task=task)
    assert {pair.rating_count for pair in pairs} == {3}
    for pair in pairs:
        raters = list(Rating.objects.filter(pair=pair).values_list("annotator", flat=True))
        assert len(raters) == len(set(raters)) == 3
    # The fourth annotator only got what the first three left: 6 pairs × 3 slots = 18.
    assert Rating.objects.filter(pair__task=task).count() == 18


def test_no_pair_has_more_than_n_live_assignments(tmp_path):
    task = queued_pairs(tmp_path, count=1)
    users = [member(f"u{i}", task.project) for i in range(4)]
    claims = [assignment_claim(user, task) for user in users]
    assert [claim is not None for claim in claims] == [True, True, True, False]


def test_a_skipped_pair_never_comes_back_to_the_same_annotator(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    user = member("skipper", task.project)
    first = assignment_claim(user, task)
    assignment_skip(first.pk, user, "outside my expertise")
    second = assignment_claim(user, task)
    assert second.pair_id != first.pair_id
    assignment_skip(second.pk, user, "also not mine")
    assert assignment_claim(user, task) is None
    # The skip gave the slot back: another annotator can take the first pair.
    other = member("other", task.project)
    assert assignment_claim(other, task).pair_id == first.pair_id


def test_skip_needs_a_reason_and_cannot_undo_a_rating(task, annotators):
    user = annotators[0]
    assignment = assignment_claim(user, task)
    with pytest.raises(AssignmentClosed, match="why"):
        assignment_skip(assignment.pk, user, "   ")
    rating_submit(assignment.pk, user, RatingInput(overall=2))
    with pytest.raises(AssignmentClosed):
        assignment_skip(assignment.pk, user, "changed my mind")
    assert Rating.objects.filter(assignment=assignment).exists()


def test_an_expired_lease_returns_the_slot(tmp_path):
    task = queued_pairs(tmp_path, count=1)
    late, *others = [member(f"u{i}", task.project) for i in range(4)]
    stale = assignment_claim(late, task)
    rate(others[0], task)
    rate(others[1], task)
    assert assignment_claim(others[2], task) is None  # full while the lease runs
    later = timezone.now() + timedelta(minutes=task.project.lease_minutes + 1)
    taken = assignment_claim(others[2], task, now=later)
    assert taken is not None and taken.pair_id == stale.pair_id
    # The late annotator's rating no longer has a slot: refused, not stored as a 4th.
    with pytest.raises(AssignmentClosed, match="another annotator"):
        rating_submit(stale.pk, late, RatingInput(overall=5), now=later)
    assert Rating.objects.filter(pair_id=stale.pair_id).count() == 2


def test_a_late_rating_is_kept_when_the_slot_is_still_free(task, annotators):
    user = annotators[0]
    assignment = assignment_claim(user, task)
    later = timezone.now() + timedelta(hours=3)
    rating_submit(assignment.pk, user, RatingInput(overall=5), now=later)
    expected = 5 if assignment.swapped else 3  # 5 on the form, stored canonically
    assert Rating.objects.get(assignment=assignment).overall == expected


def test_an_expired_lease_is_resumed_when_its_slot_is_free(task, annotators):
    user = annotators[0]
    first = assignment_claim(user, task)
    later = timezone.now() + timedelta(hours=3)
    again = assignment_claim(user, task, now=later)
    assert again.pk == first.pk
    assert again.lease_expires_at > later


def test_partly_rated_pairs_come_first(tmp_path):
    task = queued_pairs(tmp_path, count=4)
    users = [member(f"u{i}", task.project) for i in range(3)]
    last = Pair.objects.filter(task=task).order_by("id").last()
    # Someone rated the last pair (for instance through an earlier lease).
    Assignment.objects.filter(pair=last).delete()
    assignment = Assignment.objects.create(pair=last, annotator=users[0])
    rating_submit(assignment.pk, users[0], RatingInput(overall=4))
    assert assignment_claim(users[1], task).pair_id == last.pk
    assert assignment_claim(users[2], task).pair_id == last.pk


def test_the_two_first_annotators_of_a_pair_see_it_in_opposite_orders(tmp_path):
    task = queued_pairs(tmp_path, count=1)
    users = [member(f"u{i}", task.project) for i in range(2)]
    first, second = (assignment_claim(user, task) for user in users)
    assert first.swapped != second.swapped


def test_pairs_that_are_not_open_are_never_handed_out(task, annotators):
    Pair.objects.filter(task=task).update(status=Pair.Status.EASY)
    assert assignment_claim(annotators[0], task) is None
    Pair.objects.filter(task=task).update(status=Pair.Status.CANDIDATE)
    assert assignment_claim(annotators[0], task) is None


def test_a_lease_on_a_pair_that_left_the_queue_is_not_resumed(task, annotators):
    user = annotators[0]
    first = assignment_claim(user, task)
    Pair.objects.filter(pk=first.pair_id).update(status=Pair.Status.DROPPED)
    second = assignment_claim(user, task)
    assert second.pair_id != first.pair_id
    assert Assignment.objects.get(pk=first.pk).status == Assignment.Status.EXPIRED
    with pytest.raises(AssignmentClosed):
        rating_submit(first.pk, user, RatingInput(overall=3))


def test_flag_reports_to_the_leads_and_skips(task, annotators):
    user = annotators[0]
    assignment = assignment_claim(user, task)
    flag = assignment_flag(assignment.pk, user, "broken", "right image is black")
    assert (flag.pair_id, flag.reason, flag.note) == (
        assignment.pair_id,
        "broken",
        "right image is black",
    )
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SKIPPED
    assert assignment_flag(assignment.pk, user, "broken").pk == flag.pk  # repeated: one flag
    assert Flag.objects.count() == 1
    with pytest.raises(AssignmentClosed):
        assignment_flag(assignment_claim(user, task).pk, user, "not-a-reason")


def test_nobody_acts_on_someone_elses_assignment(task, annotators):
    owner, intruder = annotators[:2]
    assignment = assignment_claim(owner, task)
    with pytest.raises(AssignmentNotFound):
        rating_submit(assignment.pk, intruder, RatingInput(overall=1))
    with pytest.raises(AssignmentNotFound):
        assignment_skip(assignment.pk, intruder, "mine now")
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.LEASED
