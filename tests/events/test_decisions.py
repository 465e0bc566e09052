"""The project events of decisions (projects/events.py): a pair decided by its ratings or by a
lead is announced once, a re-decision again, and the last pair of the experts' queue announces
its task complete (webhooks and the figures listen). Every path that decides pairs announces:
ratings, a lead, a settings change, the pair browser's bulk actions, an import; one that
decides many announces them as one burst (what the dashboards' refresh and the webhook
deliveries work by)."""

import pytest

from annotation.services import adjudication
from annotation.services.adjudication import pair_adjudicate
from annotation.services.assignments import assignment_claim
from annotation.services.pair_bulk import pair_bulk_apply
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from imports.services.pair_import import pairs_import
from projects.events import burst_gather, project_event
from projects.models import Membership
from setup.services import project_update
from tests.factories import member, mmrb2_pair, queued_pairs, write_image, write_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    """The events heard, in order; `heard.bursts`: how many events each burst carried."""

    class Heard(list):
        bursts: list[int]

    events = Heard()
    events.bursts = []

    def listen(sender, *, kind, data, **_):
        events.append((kind, data))
        burst_gather("tests.events.heard", kind, lambda kinds: events.bursts.append(len(kinds)))

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
    """The probe: a pair rated 2 of 7 with N = 1 is kept and announced; widening the ambiguous
    band drops it, and that is announced too."""
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


def test_a_settings_change_announces_every_batch_s_re_decisions_as_one_burst(
    tmp_path, heard, django_capture_on_commit_callbacks, monkeypatch
):
    task = queued_pairs(tmp_path, count=3)
    project = task.project
    project_update(project, annotators_per_pair=1)
    expert = member("expert", project)
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):
            assignment = assignment_claim(expert, task)
            rating_submit(assignment.pk, expert, RatingInput(overall=2))
    assert heard.bursts == [1, 1, 2]  # a rating apiece, the last with its task.complete
    monkeypatch.setattr(adjudication, "_BATCH", 1)  # a transaction per pair
    with django_capture_on_commit_callbacks(execute=True):
        assert project_update(project, ambiguous_half_width=2) == 3
    assert [kind for kind, _ in heard[4:]] == ["pair.decided"] * 3
    assert heard.bursts[3:] == [3]


def test_a_bulk_drop_announces_the_pairs_a_lead_decided_as_one_burst(
    tmp_path, heard, django_capture_on_commit_callbacks
):
    task = queued_pairs(tmp_path, count=3)
    project = task.project
    lead = member("lead", project, role=Membership.Role.LEAD)
    ids = list(Pair.objects.filter(task=task).values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        result = pair_bulk_apply(
            project=project, lead=lead, action="drop", pair_ids=ids, note="off-topic"
        )
    assert result.changed == 3
    assert [kind for kind, _ in heard] == ["pair.decided"] * 3 + ["task.complete"]
    decided = [(data["pair"], data["status"], data["by"]) for _, data in heard[:3]]
    assert decided == [(pk, "dropped", "adjudication") for pk in ids]
    assert heard.bursts == [4]


def test_an_import_announces_the_pairs_its_experts_ratings_decide(
    tmp_path, heard, django_capture_on_commit_callbacks
):
    """Imported ratings decide pairs as Arbiter's own do, and are heard the same way, all of
    the import in one burst; a pair that only carries the file's reference label was decided
    by no one here."""
    for name in ("a.png", "b.png"):
        write_image(tmp_path / name)
    rated = [mmrb2_pair(f"rated-{n}", scores=(5, 6, 5), chosen="A") for n in range(3)]  # K = 6
    labelled = mmrb2_pair("labelled", scores=(), chosen="B")
    source = write_jsonl(tmp_path / "pairs.jsonl", [*rated, labelled])
    with django_capture_on_commit_callbacks(execute=True):
        pairs_import(source, project_slug="imported", task_slug="t2i", images_dir=tmp_path)
    decided = [data for kind, data in heard if kind == "pair.decided"]
    assert [(data["external_id"], data["status"], data["by"]) for data in decided] == [
        (f"rated-{n}", "kept", "consensus") for n in range(3)
    ]
    assert decided[0]["pair"] == Pair.objects.get(external_id="rated-0").pk
    assert heard.bursts == [3]
