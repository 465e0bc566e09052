"""The trail's pages: a lead reads their project's entries (filtered, paged, as CSV, in a
fixed number of queries); another project's lead, the project's annotators and anyone else get
the 404 of a project that does not exist; the operator reads the whole trail."""

import csv
import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEntry, AuditKind
from projects.models import Project
from tests.factories import member

pytestmark = pytest.mark.django_db


def _entry(project, *, kind=AuditKind.JUDGE, who="boss", what="coin", when=None, **fields):
    return AuditEntry.objects.create(
        content_type=ContentType.objects.get_for_model(Project),
        object_pk="1",
        object_repr=what,
        action=AuditEntry.Action.UPDATE,
        kind=kind,
        project_id=project.pk if project else None,
        actor_name=who,
        remote_addr="198.51.100.4",
        changes={"name": ["old", "new"]},
        **({"timestamp": when} if when else {}),
        **fields,
    )


@pytest.fixture
def projects():
    mine = Project.objects.create(slug="mine", name="Mine")
    theirs = Project.objects.create(slug="theirs", name="Theirs")
    return mine, theirs


@pytest.fixture
def project(projects):
    return projects[0]


def _page(client, slug, **query):
    return client.get(reverse("project-audit", args=[slug]), query)


def test_a_lead_sees_their_projects_entries_and_never_another_projects(client, projects, lead):
    mine, theirs = projects
    _entry(mine, what="my-judge")
    _entry(theirs, what="their-secret-judge")
    _entry(None, kind=AuditKind.SIGN_IN, what="someone-signed-in")
    page = _page(client, "mine").content.decode()
    assert "my-judge" in page
    assert "their-secret-judge" not in page and "someone-signed-in" not in page
    assert 'aria-current="page">Audit trail</a>' in page  # the project's tab


@pytest.mark.parametrize("fmt", ["", "csv"])
def test_another_projects_trail_answers_like_a_missing_project(client, projects, lead, fmt):
    mine, theirs = projects
    _entry(theirs, what="their-secret-judge")
    query = {"format": fmt} if fmt else {}
    missing = _page(client, "no-such-project", **query)
    other = _page(client, "theirs", **query)
    assert missing.status_code == other.status_code == 404
    assert _without_nonces(other) == _without_nonces(missing)
    assert b"their-secret-judge" not in other.content


def _without_nonces(answer) -> str:
    """The page, less what differs on every answer (the CSP nonce, the CSRF token)."""
    text = re.sub(r'nonce="[^"]*"', "", answer.content.decode())
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)


def test_the_projects_annotators_get_the_same_404(client, projects):
    mine, _ = projects
    _entry(mine, what="my-judge")
    client.force_login(member("ann", mine))
    assert _page(client, "mine").status_code == 404
    assert _page(client, "mine", format="csv").status_code == 404
    assert client.get(reverse("operator-audit")).status_code == 404


def test_the_trail_filters_by_kind_who_and_date(client, projects, lead):
    mine, _ = projects
    now = timezone.now()
    _entry(mine, kind=AuditKind.JUDGE, who="boss", what="judge-by-boss")
    _entry(mine, kind=AuditKind.GOLD, who="other", what="gold-by-other")
    _entry(mine, kind=AuditKind.TASK, who="boss", what="old-task", when=now - timedelta(days=10))

    def shown(**query):
        page = _page(client, "mine", **query).content.decode()
        return {w for w in ("judge-by-boss", "gold-by-other", "old-task") if w in page}

    assert shown() == {"judge-by-boss", "gold-by-other", "old-task"}
    assert shown(kind="gold") == {"gold-by-other"}
    assert shown(who="boss") == {"judge-by-boss", "old-task"}
    day = (now - timedelta(days=10)).date().isoformat()
    assert shown(since=(now - timedelta(days=1)).date().isoformat()) == {
        "judge-by-boss", "gold-by-other"}  # fmt: skip
    assert shown(since=day, until=day) == {"old-task"}


def test_a_wrong_filter_is_a_400_naming_the_field(client, projects, lead):
    answer = _page(client, "mine", since="yesterday", kind="nonsense")
    assert answer.status_code == 400
    assert set(answer.context["form"].errors) == {"since", "kind"}


@pytest.mark.parametrize("fmt", ["html", "csv"])
def test_the_first_and_last_days_a_date_can_name_are_filters_not_errors(
    client, projects, lead, fmt
):
    _entry(projects[0], what="an-entry")
    answer = _page(client, "mine", since="0001-01-01", until="9999-12-31", format=fmt)
    assert answer.status_code == 200
    body = b"".join(answer.streaming_content) if answer.streaming else answer.content
    assert b"an-entry" in body


def test_the_trail_is_paged_and_its_query_count_does_not_grow(client, projects, lead):
    mine, _ = projects
    _entry(mine, what="first-entry", when=timezone.now() - timedelta(hours=1))
    with CaptureQueriesContext(connection) as small:
        assert _page(client, "mine").status_code == 200
    for i in range(60):
        _entry(mine, what=f"entry-{i}")
    with CaptureQueriesContext(connection) as large:
        first = _page(client, "mine").content.decode()
    assert len(large) == len(small) <= 5, [q["sql"][:100] for q in large.captured_queries]
    assert "entry-59" in first and "first-entry" not in first and 'rel="next"' in first
    second = _page(client, "mine", page=2).content.decode()
    assert "first-entry" in second and 'rel="prev"' in second and 'rel="next"' not in second


def test_the_csv_streams_the_filtered_trail_with_formulas_defused(client, projects, lead):
    mine, theirs = projects
    _entry(mine, what="=HYPERLINK(1)", kind=AuditKind.JUDGE)
    _entry(mine, what="a-gold", kind=AuditKind.GOLD)
    _entry(theirs, what="their-secret-judge")
    answer = _page(client, "mine", format="csv", kind="judge")
    assert answer.status_code == 200 and answer.streaming
    assert answer["Content-Disposition"] == 'attachment; filename="mine-audit.csv"'
    rows = list(csv.reader(io.StringIO(b"".join(answer.streaming_content).decode())))
    assert rows[0] == ["time", "kind", "action", "object", "project", "who", "from", "changes"]
    assert [row[3] for row in rows[1:]] == ["'=HYPERLINK(1)"]
    assert rows[1][5:] == ["boss", "198.51.100.4", "name: old → new"]


def test_the_operator_reads_the_whole_trail_sign_ins_included(client, projects):
    mine, theirs = projects
    _entry(theirs, what="their-judge")
    _entry(None, kind=AuditKind.SIGN_IN_FAILED, what="mallory", who="")
    client.force_login(User.objects.create_superuser("root", password="pw-root-1"))
    page = client.get(reverse("operator-audit")).content.decode()
    assert "their-judge" in page and "mallory" in page
    rows = client.get(reverse("operator-audit"), {"format": "csv", "kind": "sign_in_failed"})
    text = b"".join(rows.streaming_content).decode()
    assert "mallory" in text and "their-judge" not in text
    assert client.get(reverse("project-audit", args=["theirs"])).status_code == 200


def test_a_lead_is_not_an_operator(client, projects, lead):
    assert client.get(reverse("operator-audit")).status_code == 404


def test_a_deleted_projects_entries_stay_for_the_operator(client, projects):
    mine, _ = projects
    _entry(mine, what="before-deletion")
    project_id = mine.pk
    mine.delete()
    assert AuditEntry.objects.filter(project_id=project_id, object_repr="before-deletion").exists()
    deleted = AuditEntry.objects.get(kind=AuditKind.PROJECT, action=AuditEntry.Action.DELETE)
    assert deleted.project_id == project_id and deleted.object_repr == "mine"
