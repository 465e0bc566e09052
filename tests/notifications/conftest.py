"""A project with two leads and two annotators, a second project whose lead must hear nothing
of the first, and `fire()`: the transaction's commit, which sends the project's events (a
test's transaction never commits). Mails leave in the background (core/outbox.py): here the
background runs inline, so that a test sees the mail it caused."""

import pytest

from core import outbox
from tests.factories import member, queued_pairs


@pytest.fixture
def site(tmp_path, tasks_in_process, monkeypatch):
    monkeypatch.setattr(outbox, "_thread_start", lambda work, *args: work(*args))
    task = queued_pairs(tmp_path, count=6)
    project = task.project
    other = queued_pairs(tmp_path, project_slug="other", count=2)

    class Site:
        pass

    site = Site()
    site.task, site.project = task, project
    site.lead = member("boss", project, role="lead")
    site.colead = member("colead", project, role="lead")
    site.ann = member("ann", project)
    site.bystander = member("bystander", project)
    site.outsider = member("outsider", other.project, role="lead")
    site.everyone = [site.lead, site.colead, site.ann, site.bystander, site.outsider]
    return site


@pytest.fixture
def exportable(site):
    """One pair of the site decided, so that an export has something to write."""
    site.task.pairs.filter(pk=site.task.pairs.order_by("pk").last().pk).update(
        status="kept", label="A"
    )
    return site


@pytest.fixture
def fire(django_capture_on_commit_callbacks):
    """`with fire(): ...`: what the block does is committed, and its events are sent."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
