"""Undoing a skip or a flag (annotation/services/skip_undo.py, the annotate page's Undo and the
API's `undo`): only the annotator's own last skip or flag, within the grace period, while the
pair is still being annotated; the pair comes back leased to them, next; a flag is withdrawn
with its notification to the leads, unless a lead already acted on it."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.gold.services import GoldEntry, gold_set
from annotation.models import Assignment, Flag
from annotation.services.assignments import (
    AssignmentNotFound,
    assignment_claim,
    assignment_flag,
    assignment_skip,
)
from annotation.services.ratings import RatingInput, rating_submit
from annotation.services.skip_undo import UndoRefused, assignment_undo
from content.models import Pair
from notifications.models import Notification
from tests.factories import member, queued_pairs
from tests.responses import unmasked

pytestmark = pytest.mark.django_db


def skipped_then_next(user, task):
    """The user skips the pair they hold and is handed the next: (skipped, next) assignments."""
    first = assignment_claim(user, task)
    assignment_skip(first.pk, user, "Outside my expertise")
    return first, assignment_claim(user, task)


def state(assignment_id: int) -> tuple:
    row = Assignment.objects.get(pk=assignment_id)
    return row.status, row.skip_reason, row.skipped_at


def test_an_undone_skip_gives_the_pair_back_leased_and_it_is_the_pair_shown_next(task, annotators):
    user = annotators[0]
    first, second = skipped_then_next(user, task)
    assert second.pk != first.pk

    undone = assignment_undo(assignment_id=first.pk, user=user)

    assert undone.pk == first.pk
    stored = Assignment.objects.get(pk=first.pk)
    assert (stored.status, stored.skip_reason, stored.skipped_at) == ("leased", "", None)
    assert stored.lease_expires_at > timezone.now() + timedelta(minutes=1)
    assert stored.swapped == first.swapped  # the same sides as before
    assert assignment_claim(user, task).pk == first.pk  # at its place: next
    rating_submit(first.pk, user, RatingInput(overall=3))
    assert assignment_claim(user, task).pk == second.pk  # then the pair that came after it


def test_an_undone_flag_is_withdrawn_with_the_leads_notification(
    task, annotators, django_capture_on_commit_callbacks
):
    user = annotators[0]
    lead = member("lead", task.project, role="lead")
    first = assignment_claim(user, task)
    with django_capture_on_commit_callbacks(execute=True):
        assignment_flag(first.pk, user, "broken", "black image")
    assert Notification.objects.filter(recipient=lead, kind="flag.raised").count() == 1
    pair_status = Pair.objects.get(pk=first.pair_id).status

    with django_capture_on_commit_callbacks(execute=True):
        assignment_undo(assignment_id=first.pk, user=user)

    assert not Flag.objects.filter(pair_id=first.pair_id).exists()
    assert not Notification.objects.filter(kind="flag.raised").exists()
    assert state(first.pk) == ("leased", "", None)
    assert Pair.objects.get(pk=first.pair_id).status == pair_status
    assert assignment_claim(user, task).pk == first.pk


def test_a_flag_a_lead_acted_on_cannot_be_withdrawn(
    task, annotators, django_capture_on_commit_callbacks
):
    user = annotators[0]
    lead = member("lead", task.project, role="lead")
    first = assignment_claim(user, task)
    with django_capture_on_commit_callbacks(execute=True):
        assignment_flag(first.pk, user, "broken")
    pair = Pair.objects.get(pk=first.pair_id)
    gold_set(task, [GoldEntry(pair.external_id, "A")], by=lead)  # the lead resolves the flag
    before = state(first.pk)

    with pytest.raises(UndoRefused, match="A lead has already acted on your flag"):
        assignment_undo(assignment_id=first.pk, user=user)

    assert state(first.pk) == before
    assert Flag.objects.get(assignment=first).resolved_by == lead
    assert Notification.objects.filter(recipient=lead, kind="flag.raised").count() == 1


def test_after_the_grace_period_the_skip_is_final(task, annotators):
    user = annotators[0]
    first, _ = skipped_then_next(user, task)
    skipped_at = Assignment.objects.get(pk=first.pk).skipped_at
    grace = timedelta(minutes=task.project.edit_grace_minutes)
    before = state(first.pk)

    with pytest.raises(UndoRefused, match="The time to undo this skip is over"):
        assignment_undo(assignment_id=first.pk, user=user, now=skipped_at + grace)

    assert state(first.pk) == before
    # A moment before the end it still could be undone.
    assignment_undo(
        assignment_id=first.pk, user=user, now=skipped_at + grace - timedelta(seconds=1)
    )
    assert state(first.pk)[0] == "leased"


def test_no_undo_when_the_project_gives_no_grace(task, annotators):
    task.project.edit_grace_minutes = 0
    task.project.save(update_fields=["edit_grace_minutes"])
    user = annotators[0]
    first, _ = skipped_then_next(user, task)
    with pytest.raises(UndoRefused):
        assignment_undo(assignment_id=first.pk, user=user)
    assert state(first.pk)[0] == "skipped"


def test_someone_elses_skip_is_not_found_and_stays_skipped(task, annotators):
    owner, other = annotators[0], annotators[1]
    first, _ = skipped_then_next(owner, task)
    before = state(first.pk)
    with pytest.raises(AssignmentNotFound):
        assignment_undo(assignment_id=first.pk, user=other)
    assert state(first.pk) == before


def test_only_the_last_action_can_be_undone(task, annotators):
    user = annotators[0]
    first, second = skipped_then_next(user, task)
    assignment_skip(second.pk, user, "Cannot decide without more context")
    third = assignment_claim(user, task)

    with pytest.raises(UndoRefused, match="Only your last action can be undone"):
        assignment_undo(assignment_id=first.pk, user=user)
    assert state(first.pk)[0] == "skipped"

    # A rating after a skip makes the skip final too.
    rating_submit(third.pk, user, RatingInput(overall=5))
    with pytest.raises(UndoRefused, match="Only your last action"):
        assignment_undo(assignment_id=second.pk, user=user)
    assert state(second.pk)[0] == "skipped"


def test_a_pair_that_was_not_skipped_has_nothing_to_undo(task, annotators):
    user = annotators[0]
    held = assignment_claim(user, task)
    with pytest.raises(UndoRefused, match="nothing to undo"):
        assignment_undo(assignment_id=held.pk, user=user)
    rating_submit(held.pk, user, RatingInput(overall=2))
    with pytest.raises(UndoRefused, match="nothing to undo"):
        assignment_undo(assignment_id=held.pk, user=user)
    assert state(held.pk)[0] == "submitted"


def test_a_pair_whose_slot_went_to_another_annotator_stays_skipped(tmp_path):
    task = queued_pairs(tmp_path, count=1, annotators_per_pair=1)
    user, other = member("slow", task.project), member("quick", task.project)
    first = assignment_claim(user, task)
    assignment_skip(first.pk, user, "Outside my expertise")
    taken = assignment_claim(other, task)
    assert taken.pair_id == first.pair_id  # the slot the skip gave back

    with pytest.raises(UndoRefused, match="went to another annotator"):
        assignment_undo(assignment_id=first.pk, user=user)
    assert state(first.pk)[0] == "skipped"

    rating_submit(taken.pk, other, RatingInput(overall=1))  # now the pair is complete
    with pytest.raises(UndoRefused, match="no longer being annotated"):
        assignment_undo(assignment_id=first.pk, user=user)
    assert state(first.pk)[0] == "skipped"


def test_a_second_undo_is_refused_and_changes_nothing(task, annotators):
    user = annotators[0]
    first, _ = skipped_then_next(user, task)
    assignment_undo(assignment_id=first.pk, user=user)
    lease = Assignment.objects.get(pk=first.pk).lease_expires_at
    with pytest.raises(UndoRefused, match="nothing to undo"):
        assignment_undo(assignment_id=first.pk, user=user)
    stored = Assignment.objects.get(pk=first.pk)
    assert (stored.status, stored.lease_expires_at) == ("leased", lease)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_undos_at_once_undo_once(tmp_path):
    task = queued_pairs(tmp_path, count=3)
    user = member("twice", task.project)
    lead = member("lead", task.project, role="lead")
    first = assignment_claim(user, task)
    assignment_flag(first.pk, user, "broken")  # committed: its notification is recorded
    assignment_claim(user, task)
    assert Notification.objects.filter(recipient=lead, kind="flag.raised").count() == 1
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def undo():
        try:
            start.wait()
            assignment_undo(assignment_id=first.pk, user=user)
            outcomes.append("undone")
        except UndoRefused:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=undo) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["refused", "undone"]
    assert state(first.pk) == ("leased", "", None)
    assert not Flag.objects.filter(assignment_id=first.pk).exists()
    assert not Notification.objects.filter(kind="flag.raised").exists()


# The page: the Undo form after a skip, the view, and the back link of the correction page.


def page_client(user) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


def skip_on_page(client, task) -> tuple[int, int]:
    """Start, skip the first pair with htmx; (skipped id, next id)."""
    first = int(
        client.post(reverse("task-next", args=[task.project.slug, task.slug]))["Location"]
        .rstrip("/")
        .split("/")[-1]
    )
    answer = client.post(
        reverse("annotate", args=[first]),
        {"action": "skip", "skip_reason": "Outside my expertise"},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200
    return first, int(answer["HX-Push-Url"].rstrip("/").split("/")[-1])


def test_the_page_after_a_skip_offers_undo_and_undo_shows_the_pair_again(task, annotators):
    user = annotators[0]
    client = page_client(user)
    first, second = skip_on_page(client, task)
    page = client.get(reverse("annotate", args=[second])).content.decode()
    undo_url = reverse("annotate-undo", args=[first])
    assert f'action="{undo_url}"' in page and 'name="csrfmiddlewaretoken"' in page
    assert "Skipped by mistake?" in page

    answer = client.post(undo_url, HTTP_HX_REQUEST="true")

    assert answer.status_code == 200
    assert answer["HX-Push-Url"] == reverse("annotate", args=[first])
    body = answer.content.decode()
    assert f'data-assignment="{first}"' in body
    assert "Undone: the pair is yours to rate again." in body
    assert state(first)[0] == "leased"
    # Without JavaScript: a redirect to the pair (here refused: nothing left to undo).
    again = client.post(undo_url)
    assert again.status_code == 409
    assert "nothing to undo" in again.content.decode()


def test_undo_without_htmx_redirects_to_the_pair(task, annotators):
    client = page_client(annotators[0])
    first, _ = skip_on_page(client, task)
    answer = client.post(reverse("annotate-undo", args=[first]))
    assert answer.status_code == 302
    assert answer["Location"] == reverse("annotate", args=[first])


def test_a_refused_undo_shows_the_current_pair_with_the_reason(task, annotators):
    user = annotators[0]
    client = page_client(user)
    first, second = skip_on_page(client, task)
    Assignment.objects.filter(pk=first).update(skipped_at=timezone.now() - timedelta(days=1))
    page = client.get(reverse("annotate", args=[second])).content.decode()
    assert reverse("annotate-undo", args=[first]) not in page  # no longer offered

    answer = client.post(reverse("annotate-undo", args=[first]), HTTP_HX_REQUEST="true")

    assert answer.status_code == 409
    body = answer.content.decode()
    assert f'data-assignment="{second}"' in body  # where the annotator was
    assert "The time to undo this skip is over." in body
    assert state(first)[0] == "skipped"


def test_undo_of_someone_elses_assignment_answers_like_a_missing_one(task, annotators):
    owner, other = annotators[0], annotators[1]
    first, _ = skip_on_page(page_client(owner), task)
    client = page_client(other)
    theirs = client.post(reverse("annotate-undo", args=[first]))
    missing = client.post(reverse("annotate-undo", args=[10**6]))
    assert theirs.status_code == missing.status_code == 404
    assert unmasked(theirs.content) == unmasked(missing.content)
    assert state(first)[0] == "skipped"
    assert client.get(reverse("annotate-undo", args=[first])).status_code == 405


def test_undo_needs_the_csrf_token(task, annotators):
    user = annotators[0]
    first, _ = skip_on_page(page_client(user), task)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(reverse("annotate-undo", args=[first])).status_code == 403
    assert state(first)[0] == "skipped"


def test_the_correction_page_links_back_to_the_current_pair(task, annotators):
    user = annotators[0]
    client = page_client(user)
    start = client.post(reverse("task-next", args=[task.project.slug, task.slug]))
    first = int(start["Location"].rstrip("/").split("/")[-1])
    answer = client.post(
        reverse("annotate", args=[first]), {"overall": "2"}, HTTP_HX_REQUEST="true"
    )
    second = int(answer["HX-Push-Url"].rstrip("/").split("/")[-1])

    correction = client.get(reverse("annotate", args=[first]) + f"?from={second}").content.decode()
    assert f'href="{reverse("annotate", args=[second])}">Back to the current pair</a>' in (
        correction
    )
    current = client.get(reverse("annotate", args=[second])).content.decode()
    assert "Back to the current pair" not in current  # on the current pair itself: no link


def test_after_skipping_the_last_pair_the_end_of_task_page_offers_undo(tmp_path):
    task = queued_pairs(tmp_path, count=1)
    user = member("last", task.project)
    client = page_client(user)
    start = client.post(reverse("task-next", args=[task.project.slug, task.slug]))
    only = int(start["Location"].rstrip("/").split("/")[-1])
    done = client.post(
        reverse("annotate", args=[only]),
        {"action": "skip", "skip_reason": "Outside my expertise"},
        HTTP_HX_REQUEST="true",
    )
    body = done.content.decode()
    assert "nothing left for you" in body and "Pair skipped." in body
    assert f'action="{reverse("annotate-undo", args=[only])}"' in body

    back = client.post(reverse("annotate-undo", args=[only]), HTTP_HX_REQUEST="true")
    assert back.status_code == 200
    assert f'data-assignment="{only}"' in back.content.decode()
