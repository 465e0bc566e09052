"""The outbox's rules without a broker (core/outbox.py): a job whose message cannot be sent
is still recorded and answered, shows as waiting for a worker, and the sweep sends it."""

import pytest
from kombu.exceptions import OperationalError

from config.celery import outbox_sweep
from exports.models import ExportJob
from exports.tasks import export_job
from projects.models import Membership
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_export_accepted_while_the_broker_is_down_is_sent_by_the_sweep(
    tmp_path, tasks_in_process, monkeypatch, client
):
    task = queued_pairs(tmp_path, count=3)
    lead = member("lead", task.project, role=Membership.Role.LEAD)
    sent = export_job.apply_async

    def refused(*args, **kwargs):
        raise OperationalError("Error 111 connecting to the broker. Connection refused.")

    # A broker that refuses the connection (outside tests, tasks go to a broker).
    export_job.app.conf.task_always_eager = False
    monkeypatch.setattr(export_job, "apply_async", refused)
    client.force_login(lead)
    started = client.post(f"/projects/{task.project.slug}/exports/start/", {"format": "jsonl"})
    assert started.status_code == 302  # accepted, not a 500
    job = ExportJob.objects.get(project=task.project)
    assert (job.status, job.enqueued_at) == (ExportJob.Status.QUEUED, None)
    page = client.get(f"/projects/{task.project.slug}/exports/")
    assert "waiting for a worker" in page.content.decode()
    assert outbox_sweep() == 0  # still down: nothing sent, nothing lost

    monkeypatch.setattr(export_job, "apply_async", sent)  # back, with a worker (in-process)
    export_job.app.conf.task_always_eager = True
    assert outbox_sweep() == 1
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE and job.enqueued_at is not None
    assert outbox_sweep() == 0  # sent once


def test_an_import_accepted_while_the_broker_is_down_is_sent_by_the_sweep(
    tmp_path, tasks_in_process, monkeypatch, client
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from content.models import Pair
    from imports.models import ImportJob
    from imports.tasks import import_job
    from projects.models import Project
    from tests.leads.test_data_page import pairs_zip

    project = Project.objects.create(slug="data", name="Data")
    client.force_login(member("boss", project, role=Membership.Role.LEAD))
    sent = import_job.apply_async

    def refused(*args, **kwargs):
        raise OperationalError("Error 111 connecting to the broker. Connection refused.")

    import_job.app.conf.task_always_eager = False
    monkeypatch.setattr(import_job, "apply_async", refused)
    upload = SimpleUploadedFile("pairs.zip", pairs_zip(3), content_type="application/zip")
    fields = {"task": "+new", "new_task": "t2i", "destination": "queue", "file_format": ""}
    fields["file"] = upload
    answer = client.post("/projects/data/data/", fields)
    assert answer.status_code == 302  # accepted, not a 500
    job = ImportJob.objects.get()
    assert (job.status, job.enqueued_at) == (ImportJob.Status.QUEUED, None)
    assert "waiting for a worker" in client.get("/projects/data/data/").content.decode()

    monkeypatch.setattr(import_job, "apply_async", sent)
    import_job.app.conf.task_always_eager = True
    assert outbox_sweep() == 1
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE and Pair.objects.count() == 3
