"""Each event reaches the people it concerns and nobody else: the project's leads for flags,
questions, imports, runs, exports and pauses; the paused annotator about their own pause;
the annotator who asked about the answer. An annotator is never told about anyone else's
work, and another project's lead hears nothing."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.gold.services import GoldEntry, gold_set
from annotation.services.assignments import assignment_claim, assignment_flag
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from content.rendering import content_summary
from exports import jobs as export_jobs
from exports.errors import ExportInvalid
from exports.jobs import export_job_start
from imports.models import ImportJob
from imports.services.import_jobs import import_job_run, import_job_start
from judging import runner
from judging.backends import CallFailed
from judging.models import Judge
from judging.services.runs import judge_run_start
from notifications.messages import notification_text
from notifications.models import Notification
from notifications.selectors import pair_names
from projects.events import publish
from projects.models import Task
from projects.scale import to_canonical
from tests.factories import image_bytes

pytestmark = pytest.mark.django_db


def told(kind: str) -> dict[str, str]:
    """{username: sentence} of everyone told about `kind`, as their list shows it."""
    notifications = list(Notification.objects.filter(kind=kind).select_related("recipient"))
    names = pair_names(notifications)
    return {
        n.recipient.username: notification_text(
            n.kind,
            {**n.data, **names.get(n.pk, {})},
            about_recipient=n.data.get("annotator") == n.recipient_id,
        )
        for n in notifications
    }


def test_a_flag_tells_the_projects_leads_only(site, fire):
    with fire():
        assignment = assignment_claim(site.ann, site.task)
        assignment_flag(assignment.pk, site.ann, "broken", "black image")
    heard = told("flag.raised")
    assert set(heard) == {"boss", "colead"}  # not the flagger, the bystander or the outsider
    prompt = content_summary(assignment.pair.prompt.content, limit=60)
    assert heard["boss"] == f"ann flagged the pair “{prompt}” in task {site.task.name}: " + (
        "Broken content (missing image, garbled text)."
    )


def test_a_flag_that_rolls_back_tells_nobody(site, fire):
    with fire():
        assignment = assignment_claim(site.ann, site.task)
    rating_submit(assignment.pk, site.ann, RatingInput(overall=3))
    with fire(), pytest.raises(Exception, match="cannot be flagged"):
        assignment_flag(assignment.pk, site.ann, "broken")
    assert not Notification.objects.exists()


def _zip(count: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        lines = []
        for i in range(count):
            lines.append(
                json.dumps(
                    {
                        "id": f"n{i}",
                        "prompt_content": [["text", f"Draw {i}"]],
                        "response_a": {
                            "model_name": "m1",
                            "response_content": [["image", f"a{i}.png"]],
                        },
                        "response_b": {
                            "model_name": "m2",
                            "response_content": [["image", f"b{i}.png"]],
                        },
                    }
                )
            )
            archive.writestr(f"a{i}.png", image_bytes(color=(i * 40 + 10, 0, 0)))
            archive.writestr(f"b{i}.png", image_bytes(color=(0, i * 40 + 10, 0)))
        archive.writestr("pairs.jsonl", "\n".join(lines) + "\n")
    return buffer.getvalue()


def test_a_finished_and_a_failed_import_tell_the_leads(site, fire):
    with fire():
        import_job_start(
            site.project, site.lead, SimpleUploadedFile("new.zip", _zip(2)), task_slug="t2i"
        )
    assert told("import.finished") == {
        "boss": "The import of “new.zip” in task t2i finished: 2 pairs written.",
        "colead": "The import of “new.zip” in task t2i finished: 2 pairs written.",
    }
    lost = ImportJob.objects.create(
        project=site.project, task_slug="t2i", requested_by=site.lead, file_name="gone.zip"
    )
    with fire():
        import_job_run(lost.pk)
    heard = told("import.failed")
    assert set(heard) == {"boss", "colead"}
    assert "“gone.zip”" in heard["boss"] and "failed: the uploaded file is gone" in heard["boss"]


# The runner writes from threads of its own: SQLite lets them only outside the test's
# transaction.
@pytest.mark.django_db(transaction=True)
def test_a_finished_judge_run_tells_the_leads(site, fire):
    with fire():
        run = judge_run_start(Judge.objects.create(name="coin", backend="random"), site.project)
    assert told("run.finished") == {
        "boss": f"Judge run #{run.pk} (coin) finished.",
        "colead": f"Judge run #{run.pk} (coin) finished.",
    }
    assert not Notification.objects.filter(kind="run.failed").exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_every_trial_failed_is_told_as_failed(site, fire, monkeypatch):
    async def refused(*args, **kwargs):
        raise CallFailed("HTTP 400 Bad Request", retryable=False)

    monkeypatch.setattr(runner, "call_backend", refused)
    with fire():
        run = judge_run_start(Judge.objects.create(name="broken", backend="random"), site.project)
    heard = told("run.failed")
    assert set(heard) == {"boss", "colead"}
    assert heard["boss"] == (f"Judge run #{run.pk} (broken) failed: every trial ended in an error.")


def test_a_ready_and_a_failed_export_tell_the_leads(site, exportable, fire, monkeypatch):
    with fire():
        job = export_job_start(site.project, site.colead)
    assert told("export.ready") == {
        "boss": f"Export #{job.pk} (1 pair) is ready to download.",
        "colead": f"Export #{job.pk} (1 pair) is ready to download.",
    }

    def refuse(*args, **kwargs):
        raise ExportInvalid("no task to export")

    monkeypatch.setattr(export_jobs, "export_archive", refuse)
    with fire():
        failed = export_job_start(site.project, site.lead)
    assert told("export.failed") == {
        "boss": f"Export #{failed.pk} failed: no task to export.",
        "colead": f"Export #{failed.pk} failed: no task to export.",
    }


def test_a_pause_tells_the_leads_and_the_paused_annotator_alone(site, fire):
    task = site.task
    Task.objects.filter(pk=task.pk).update(
        gold_action=Task.GoldAction.PAUSE, gold_min_answers=2, gold_min_accuracy=0.7, gold_rate=0.5
    )
    task.refresh_from_db()
    pairs = list(Pair.objects.filter(task=task).order_by("pk")[:3])
    gold_set(task, [GoldEntry(pair.external_id, "A") for pair in pairs])
    gold = {pair.pk for pair in pairs}
    for _ in range(6):  # gold checks answered wrong (B where A is right) until paused
        with fire():
            assignment = assignment_claim(site.ann, task)
            if assignment is None:
                break
            wrong = to_canonical(2, 7, assignment.swapped)
            shown = wrong if assignment.pair_id in gold else 4
            rating_submit(assignment.pk, site.ann, RatingInput(overall=shown))
    heard = told("annotator.paused")
    assert set(heard) == {"boss", "colead", "ann"}
    assert heard["boss"] == "ann was paused in task t2i by the gold checks."
    assert heard["ann"].startswith("You are paused in task t2i")


def test_questions_reach_the_leads_and_the_answer_the_asker_only(site, fire):
    with fire():
        publish(
            site.project,
            "question.asked",
            {"pair": 7, "thread": 1, "message": 1},
            actor=site.ann,
        )
    assert set(told("question.asked")) == {"boss", "colead"}
    with fire():
        publish(
            site.project,
            "question.answered",
            {"pair": 7, "thread": 1, "message": 2, "asker": site.ann.pk, "assignment": 3},
            actor=site.lead,
        )
    # Pair 7 does not exist: the sentence names no pair rather than an id.
    assert told("question.answered") == {"ann": "A lead answered your question about a pair."}


def test_an_annotator_is_never_told_about_the_projects_work(site, fire):
    """Whatever the data names, only the two annotator kinds ever reach an annotator, and an
    answer reaches its asker only while they belong to the project."""
    for kind in ("flag.raised", "import.finished", "run.finished", "export.ready"):
        with fire():
            publish(site.project, kind, {"annotator": site.ann.pk, "asker": site.ann.pk})
    with fire():
        publish(site.project, "question.answered", {"pair": 1, "asker": site.outsider.pk})
    annotators = [site.ann, site.bystander, site.outsider]
    assert not Notification.objects.filter(recipient__in=annotators).exists()
    assert Notification.objects.filter(recipient=site.lead).count() == 4
