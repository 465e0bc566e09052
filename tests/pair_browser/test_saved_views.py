"""Saved views of the pair browser through the Django test client: a lead saves the filter,
sort and columns under a name, private or shared with the project's leads; sees their own and
the shared ones; deletes only their own. Another project's lead sees none of them, and an id
out of scope answers exactly like a missing one. Hostile input never reaches a link."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from dashboards.models import SavedView
from dashboards.services.saved_views import MAX_VIEWS_PER_LEAD
from projects.models import Membership
from tests.factories import member

pytestmark = pytest.mark.django_db
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def pairs_url(project, query: str = "") -> str:
    return reverse("dash-pairs", args=[project.slug]) + (f"?{query}" if query else "")


def save(client, project, name, query, shared=False):
    form = {"view_action": "save", "name": name, "filter": query}
    if shared:
        form["shared"] = "1"
    return client.post(pairs_url(project), form)


def delete(client, project, view_id, query=""):
    form = {"view_action": "delete", "view": str(view_id), "filter": query}
    return client.post(pairs_url(project), form)


@pytest.fixture
def two_leads(browsed):
    project, lead = browsed
    colleague = member("colleague", project, role=Membership.Role.LEAD)
    return project, lead, colleague


def test_a_saved_view_keeps_filter_sort_and_columns_and_opens_them_again(two_leads):
    project, lead, _ = two_leads
    client = signed_in(lead)
    query = "task=edit&sort=span&order=desc&cols=prompt,images,status"
    answer = save(client, project, "  Edit,   widest first ", query)
    view = SavedView.objects.get(project=project, owner=lead)
    assert view.name == "Edit, widest first"
    assert answer.status_code == 302
    assert answer["Location"] == pairs_url(project, view.query)
    opened = client.get(answer["Location"]).content.decode()
    assert "4 pairs match" in opened
    assert 'aria-current="true">Edit, widest first</a>' in opened
    # Only the chosen columns are shown: no Generators column, a Status column.
    assert "<th>Generators</th>" not in opened and ">Status</a></th>" in opened


def test_private_views_stay_with_their_owner_and_shared_ones_reach_the_projects_leads(
    two_leads, other_project
):
    project, lead, colleague = two_leads
    _, other_lead = other_project
    save(signed_in(lead), project, "mine only", "status=kept")
    save(signed_in(lead), project, "for the team", "flagged=yes", shared=True)
    seen_by_colleague = signed_in(colleague).get(pairs_url(project)).content.decode()
    assert "for the team" in seen_by_colleague and "shared by boss" in seen_by_colleague
    assert "mine only" not in seen_by_colleague
    own = signed_in(lead).get(pairs_url(project)).content.decode()
    assert "mine only" in own and "for the team" in own
    # The other project's lead sees none of them on their own project's page.
    other = signed_in(other_lead).get(pairs_url(other_project[0])).content.decode()
    assert "for the team" not in other and "mine only" not in other


def test_only_the_owner_deletes_a_view_and_out_of_scope_ids_answer_like_missing_ones(
    two_leads, other_project
):
    project, lead, colleague = two_leads
    other, other_lead = other_project
    save(signed_in(lead), project, "team view", "flagged=yes", shared=True)
    view = SavedView.objects.get(name="team view")
    missing = SavedView.objects.order_by("-pk").first().pk + 1000
    answers = [
        delete(signed_in(colleague), project, view.pk),  # shared with them, not theirs
        delete(signed_in(other_lead), other, view.pk),  # another project's lead, their project
        delete(signed_in(colleague), project, missing),
        delete(signed_in(lead), project, "1 OR 1=1"),
    ]
    assert [answer.status_code for answer in answers] == [404] * 4
    # The same lead, another's view and a missing one: the same page, byte for byte (but for
    # the per-response CSRF mask).
    same_lead = {CSRF.sub("", answers[n].content.decode()) for n in (0, 2)}
    assert len(same_lead) == 1, "an out-of-scope view answers exactly like a missing one"
    assert signed_in(other_lead).post(pairs_url(project), {"view_action": "delete",
                                      "view": view.pk}).status_code == 404  # fmt: skip
    assert SavedView.objects.filter(pk=view.pk).exists()
    answer = delete(signed_in(lead), project, view.pk, "task=edit")
    assert answer.status_code == 302 and answer["Location"] == pairs_url(project, "task=edit")
    assert not SavedView.objects.filter(pk=view.pk).exists()


def test_the_same_name_replaces_the_view_and_a_lead_has_a_bounded_number(two_leads):
    project, lead, colleague = two_leads
    client = signed_in(lead)
    save(client, project, "queue", "status=queued")
    save(client, project, "queue", "status=kept", shared=True)
    view = SavedView.objects.get(owner=lead)
    assert (view.query, view.shared) == ("status=kept", True)
    for number in range(1, MAX_VIEWS_PER_LEAD):
        save(client, project, f"view {number}", f"ratings_min={number % 4}")
    assert SavedView.objects.filter(owner=lead).count() == MAX_VIEWS_PER_LEAD
    refused = save(client, project, "one too many", "status=queued")
    assert refused.status_code == 302
    page = client.get(refused["Location"]).content.decode()
    assert "View not saved" in page and "delete one first" in page
    assert SavedView.objects.filter(owner=lead).count() == MAX_VIEWS_PER_LEAD
    save(signed_in(colleague), project, "theirs", "status=queued")  # a bound per lead
    assert SavedView.objects.filter(owner=colleague).count() == 1


@pytest.mark.parametrize(
    "name, query",
    [
        ("", "status=kept"),
        (" \t ", "status=kept"),
        ("x" * 81, "status=kept"),
        ("bad filter", "ratings_min=abc"),
        ("bad column", "cols=password"),
        ("bad task", "task=%3Cscript%3E"),
    ],
)
def test_a_bad_name_or_filter_saves_nothing_and_says_why(two_leads, name, query):
    project, lead, _ = two_leads
    client = signed_in(lead)
    answer = save(client, project, name, query)
    assert answer.status_code == 302
    assert "View not saved" in client.get(answer["Location"]).content.decode()
    assert not SavedView.objects.exists()


def test_a_view_stores_only_the_checked_fields_re_encoded(two_leads):
    project, lead, _ = two_leads
    hostile = 'q=<script>alert(1)</script>&page=3&format=csv&next=//evil.example&task=edit"'
    save(signed_in(lead), project, "<b>bold</b>", hostile.replace('"', ""))
    view = SavedView.objects.get()
    assert view.query == "q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E&task=edit"
    body = signed_in(lead).get(pairs_url(project)).content.decode()
    assert "<b>bold</b>" not in body and "&lt;b&gt;bold&lt;/b&gt;" in body


def test_annotators_and_outsiders_cannot_save_a_view(two_leads, other_project):
    project, _, _ = two_leads
    annotator = project.memberships.get(user__username="ann1").user
    _, other_lead = other_project
    for user in (annotator, other_lead):
        assert save(signed_in(user), project, "sneaky", "status=kept").status_code == 404
    assert not SavedView.objects.exists()
