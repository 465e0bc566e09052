"""A project with a lead signed in from a known address, for the audit trail's tests."""

import pytest
from django.utils import timezone

from audit.models import AuditEntry
from tests.factories import queued_pairs

ADDRESS = "203.0.113.7"


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path, count=4)


@pytest.fixture
def project(task):
    return task.project


@pytest.fixture(autouse=True)
def _lead_signed_in(lead_signs_in):
    """A test here that takes the lead (tests/conftest.py) acts as the lead."""


@pytest.fixture
def since():
    return timezone.now()


def newest(kind: str, action: int | None = None) -> AuditEntry:
    entries = AuditEntry.objects.filter(kind=kind)
    if action is not None:
        entries = entries.filter(action=action)
    return entries.order_by("-timestamp", "-id").first()


def assert_by(entry: AuditEntry, user, since, project_id) -> None:
    """Who, when and from where: the lead, after `since`, from ADDRESS, in the project."""
    assert entry is not None
    assert (entry.actor_id, entry.actor_name) == (user.pk, user.username)
    assert since <= entry.timestamp <= timezone.now()
    assert entry.remote_addr == ADDRESS
    assert entry.project_id == project_id
