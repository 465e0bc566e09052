"""The project events of decisions (projects/events.py): a pair decided by its ratings or by a
lead is announced once, a re-decision again, and the last pair of the experts' queue announces
its task complete (webhooks and the figures listen)."""

import pytest

from annotation.services.adjudication import pair_adjudicate
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from projects.events import project_event
from projects.models import Membership
from setup.services import project_update
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    events: list[tuple[str, dict]] = []

    def listen(sender, *, kind, data, **_):
        events.append((kind, data))

    project_event.connect(listen, dispatch_uid="tests.events.heard")
    yield events
    project_event.disconnect(dispatch_uid="tests.events.heard")


def test_ratings_and_a_lead_announce_decisions_and_the_complete_task(
    tmp_path, heard, django_capture_on_commit_callbacks
):
    task = queued_pairs(tmp_path, count=2)
    project = task.project
    project.annotators_per_pair = 1
    project.save(update_fields=["annotators_per_pair"])
    expert = member("expert", project)
    lead = member("lead", project, role=Membership.Role.LEAD)

    with django_capture_on_commit_callbacks(execute=True):
        first = assignment_claim(expert, task)
        rating_submit(first.pk, expert, RatingInput(overall=1))
    assert [kind for kind, _ in heard] == ["pair.decided"]
    assert heard[0][1]["pair"] == first.pair_id and heard[0][1]["by"] == "consensus"

    with django_capture_on_commit_callbacks(execute=True):
        second = assignment_claim(expert, task)
        rating_submit(second.pk, expert, RatingInput(overall=7))
    assert [kind for kind, _ in heard[1:]] == ["pair.decided", "task.complete"]
    assert heard[2][1] == {"task": task.pk}

    with django_capture_on_commit_callbacks(execute=True):  # the same decision again: silent
        rating_submit(second.pk, expert, RatingInput(overall=7))
    assert len(heard) == 3
    with django_capture_on_commit_callbacks(execute=True):  # a lead decides otherwise
        pair_adjudicate(second.pair_id, lead, "drop", "both responses ignore the prompt")
    assert [kind for kind, _ in heard[3:]] == ["pair.decided"]  # the task was complete
    assert heard[3][1]["by"] == "adjudication" and heard[3][1]["status"] == "dropped"


def test_a_settings_change_that_re_decides_a_pair_announces_it(
    tmp_path, heard, django_capture_on_commit_callbacks
):
    task = queued_pairs(tmp_path, count=2)
    project = task.project
    project_update(project, annotators_per_pair=1)
    expert = member("expert", project)
    with django_capture_on_commit_callbacks(execute=True):
        first = assignment_claim(expert, task)
        rating_submit(first.pk, expert, RatingInput(overall=2))  # of 7: B, kept
    assert [(kind, data["status"]) for kind, data in heard] == [("pair.decided", "kept")]

    # A wider ambiguous band around the centre (4) now takes in a mean of 2: dropped.
    with django_capture_on_commit_callbacks(execute=True):
        assert project_update(project, ambiguous_half_width=2) == 1
    assert [kind for kind, _ in heard[1:]] == ["pair.decided"]
    assert heard[1][1]["pair"] == first.pair_id
    assert (heard[1][1]["status"], heard[1][1]["by"]) == ("dropped", "consensus")

    with django_capture_on_commit_callbacks(execute=True):  # the same rules again: silent
        assert project_update(project, ambiguous_half_width=2) == 0
    assert len(heard) == 2
