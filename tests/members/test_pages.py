"""The members page and the invitation link, from the browser's side: the whole flow,
access, escaping, the query budget, mail and the rate limit."""

import re

import pytest
from django.conf import global_settings
from django.contrib.auth.models import User
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from annotation.models import Rating
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from projects.models import Invitation, Membership, Project
from tests.factories import invitation, invitation_expired, member
from tests.members.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LINK = re.compile(r'value="(http://testserver/invite/([A-Za-z0-9_-]+)/)"')


def members_url(project):
    return reverse("project-members", args=[project.slug])


def _invite(client, project, **fields):
    data = {"role": "annotator", "days": 7, "email": "", "note": "", **fields}
    answer = client.post(members_url(project), data)
    assert answer.status_code == 200, answer.content.decode()[:2000]
    return LINK.search(answer.content.decode())


def _sign_up(client, link, username="newbie", password=PASSWORD, again=None):
    return client.post(
        link, {"username": username, "password1": password, "password2": again or password}
    )


def test_the_whole_flow_invite_accept_see_the_project_and_rate(client, lead_client, project, task):
    found = _invite(lead_client, project, note="for Ann")
    link, token = found.group(1), found.group(2)
    assert Invitation.objects.get().note == "for Ann"
    lead_client.logout()

    page = client.get(link)
    assert page.status_code == 200
    body = page.content.decode()
    assert project.name in body and "annotator" in body
    answer = _sign_up(client, link)
    assert answer.status_code == 302 and answer["Location"] == reverse("home")
    newbie = User.objects.get(username="newbie")
    assert Membership.objects.get(user=newbie, project=project).role == "annotator"

    home = client.get(reverse("home")).content.decode()  # signed in by the link
    assert project.name in home and task.name in home and "Start" in home
    start = client.post(reverse("task-next", args=[project.slug, task.slug]))
    assert start.status_code == 302
    rated = client.post(start["Location"], {"overall": "6"})
    assert rated.status_code == 302
    assert Rating.objects.get(annotator=newbie).pair.project == project

    client.logout()
    assert client.get(link).status_code == 404  # used: the link is spent
    assert client.get(reverse("invite", args=[token])).status_code == 404


def test_a_signed_in_user_gets_a_join_button(client, project, lead):
    created = invitation(project, lead, role="lead")
    elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
    known = member("known", elsewhere)
    client.force_login(known)
    url = reverse("invite", args=[created.token])
    body = client.get(url).content.decode()
    assert f"Join {project.name}" in body and 'name="password1"' not in body
    answer = client.post(url)
    assert answer.status_code == 302 and answer["Location"] == reverse("home")
    assert Membership.objects.get(user=known, project=project).role == "lead"
    assert User.objects.filter(username="known").count() == 1


def test_the_link_opened_again_by_who_joined_with_it_leads_home(client, project, lead):
    """A second click on the mail's link (or the link after joining at an SSO sign-in) is no
    dead end for the one who joined; for anyone else, or once they left, it is spent."""
    created = invitation(project, lead)
    url = reverse("invite", args=[created.token])
    _sign_up(client, url, username="joiner")
    again = client.get(url)
    assert again.status_code == 302 and again["Location"] == reverse("home")
    home = client.get(reverse("home")).content.decode()
    assert f"You have joined {project.name}." in home
    client.force_login(member("bystander", Project.objects.create(slug="by", name="By")))
    assert client.get(url).status_code == 404
    Membership.objects.filter(user__username="joiner").delete()
    client.force_login(User.objects.get(username="joiner"))
    assert client.get(url).status_code == 404


def test_the_link_after_joining_at_an_organisation_sign_in_leads_home(client, project, lead):
    """With passwords off the invitee signs in through the provider, which accepts the
    invitation by their verified address; the link they came by then leads home too."""
    from projects.services.invitations import invitations_accept_for_email

    created = invitation(project, lead, email="ada@example.org")
    ada = User.objects.create_user("ada", email="ada@example.org")
    [joined] = invitations_accept_for_email(user=ada, email="ada@example.org")
    assert joined.project == project
    client.force_login(ada)
    answer = client.get(reverse("invite", args=[created.token]))
    assert answer.status_code == 302 and answer["Location"] == reverse("home")


@pytest.mark.parametrize("state", ["used", "revoked", "expired", "unknown"])
def test_every_closed_link_shows_the_same_page(client, project, lead, state):
    created = invitation(project, lead)
    url = reverse("invite", args=[created.token])
    if state == "used":
        _sign_up(client, url, username="first")
        client.logout()
    elif state == "revoked":
        Invitation.objects.update(revoked_at=created.invitation.created_at)
    elif state == "expired":
        invitation_expired(created)
    else:
        url = reverse("invite", args=["x" * 43])
    for answer in (client.get(url), _sign_up(client, url, username="second")):
        assert answer.status_code == 404
        body = answer.content.decode()
        assert "This invitation link is not valid any more" in body
        for word in ("used", "revoked", "expired", "unknown"):
            assert word not in body.lower()
    assert not User.objects.filter(username="second").exists()


def test_the_form_checks_the_passwords(client, project, lead):
    url = reverse("invite", args=[invitation(project, lead).token])
    differ = _sign_up(client, url, again=PASSWORD + "x")
    assert differ.status_code == 400 and "The two passwords differ" in differ.content.decode()
    weak = _sign_up(client, url, password="12345678")
    assert weak.status_code == 400 and "too common" in weak.content.decode()
    similar = _sign_up(client, url, username="violetharbour", password="violetharbour1")
    assert similar.status_code == 400
    assert not User.objects.exclude(username="boss").exists()
    assert _sign_up(client, url).status_code == 302  # still open


def test_posts_to_the_link_are_rate_limited(client, project, lead, settings):
    settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT = 3
    url = reverse("invite", args=[invitation(project, lead).token])
    for _ in range(3):
        assert _sign_up(client, url, password="1").status_code == 400
    refused = _sign_up(client, url)  # the right input is refused too while limited
    assert refused.status_code == 429 and "Too many attempts" in refused.content.decode()
    assert not User.objects.filter(username="newbie").exists()


def test_guessing_links_is_rate_limited_per_address(client, project, lead, settings):
    settings.ARBITER_LOGIN_FAILURES_PER_ADDRESS = 5
    for guess in range(5):
        assert _sign_up(client, reverse("invite", args=[f"guess{guess}"])).status_code == 404
    real = reverse("invite", args=[invitation(project, lead).token])
    assert _sign_up(client, real).status_code == 429


def test_the_link_is_mailed_when_the_server_sends_mail(lead_client, project, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    found = _invite(lead_client, project, email="ann@example.org")
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["ann@example.org"] and found.group(1) in mail.outbox[0].body


def test_without_a_mail_server_nothing_is_sent(lead_client, project, settings):
    settings.EMAIL_BACKEND = global_settings.EMAIL_BACKEND
    settings.EMAIL_HOST = global_settings.EMAIL_HOST
    page = lead_client.get(members_url(project)).content.decode()
    assert "This server sends no mail" in page
    assert _invite(lead_client, project, email="ann@example.org") is not None  # shown to copy
    assert mail.outbox == []


def test_the_link_is_shown_once(lead_client, project):
    token = _invite(lead_client, project).group(2)
    assert token not in lead_client.get(members_url(project)).content.decode()


def test_the_page_has_no_inline_script_and_a_copy_button(lead_client, project):
    answer = lead_client.post(members_url(project), {"role": "annotator", "days": 7})
    body = answer.content.decode()
    assert "data-copy=" in body and "/static/members.js" in body
    assert "onclick" not in body
    assert not re.search(r"<script(?![^>]*\bsrc=)", body)  # every script is a file
    assert (
        "'unsafe-inline'"
        not in answer["Content-Security-Policy"].split("script-src")[1].split(";")[0]
    )
    assert answer["Cache-Control"].startswith("max-age=0") or "no-store" in answer["Cache-Control"]


def test_invitation_input_errors_are_a_400(lead_client, project):
    answer = lead_client.post(members_url(project), {"role": "annotator", "days": 31})
    assert answer.status_code == 400 and "days" in answer.context["form"].errors
    assert not Invitation.objects.exists()


# Managing members.


def test_a_lead_changes_a_role_and_task_limits(lead_client, project, task, other_task):
    annotator = member("ann", project)
    membership = Membership.objects.get(user=annotator)
    url = reverse("member-update", args=[project.slug, membership.pk])
    answer = lead_client.post(url, {"role": "lead", "tasks": [other_task.pk]})
    assert answer.status_code == 302
    membership.refresh_from_db()
    assert membership.role == "lead" and list(membership.tasks.all()) == [other_task]
    lead_client.post(url, {"role": "annotator"})
    membership.refresh_from_db()
    assert membership.role == "annotator" and not membership.tasks.exists()


def test_removing_a_member_ends_access_and_keeps_ratings(client, lead_client, project, task):
    annotator = member("ann", project)
    assignment = assignment_claim(annotator, task)
    rating_submit(assignment.pk, annotator, RatingInput(overall=2))
    leased = assignment_claim(annotator, task)
    membership = Membership.objects.get(user=annotator)
    answer = lead_client.post(reverse("member-deactivate", args=[project.slug, membership.pk]))
    assert answer.status_code == 302
    assert not Membership.objects.filter(user=annotator).exists()
    assert Rating.objects.filter(annotator=annotator).count() == 1  # the ratings stay
    leased.refresh_from_db()
    assert leased.lease_expires_at <= timezone.now()  # its slot is free again
    page = lead_client.get(members_url(project)).content.decode()
    assert "Former members" in page and "ann · 1 rating" in page
    client.force_login(annotator)
    assert project.name not in client.get(reverse("home")).content.decode()
    assert client.get(reverse("annotate", args=[assignment.pk])).status_code == 404
    assert client.post(reverse("task-next", args=[project.slug, task.slug])).status_code == 404
    assert project.slug not in client.get("/api/projects/").content.decode()
    assert client.get(f"/api/assignments/{assignment.pk}/").status_code == 404
    assert User.objects.get(username="ann").is_active  # the account is the operator's


def test_the_last_lead_cannot_remove_or_demote_themselves(lead_client, project, lead):
    mine = Membership.objects.get(user=lead)
    lead_client.post(reverse("member-deactivate", args=[project.slug, mine.pk]))
    lead_client.post(reverse("member-update", args=[project.slug, mine.pk]), {"role": "annotator"})
    mine.refresh_from_db()
    assert mine.role == "lead"
    page = lead_client.get(members_url(project)).content.decode()
    assert "last lead" in page


def test_a_lead_who_is_not_the_last_may_leave(lead_client, project, lead):
    member("deputy", project, role="lead")
    mine = Membership.objects.get(user=lead)
    answer = lead_client.post(reverse("member-deactivate", args=[project.slug, mine.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("home")
    assert not Membership.objects.filter(user=lead).exists()


def test_no_field_reaches_the_account(lead_client, project):
    annotator = member("ann", project)
    membership = Membership.objects.get(user=annotator)
    url = reverse("member-update", args=[project.slug, membership.pk])
    lead_client.post(
        url,
        {"role": "annotator", "is_superuser": "on", "is_staff": "on", "password": "owned-123456"},
    )
    annotator.refresh_from_db()
    assert not annotator.is_superuser and not annotator.is_staff
    assert annotator.check_password("pw-annotate-1")
    bad = lead_client.post(url, {"role": "operator"})
    assert bad.status_code == 302
    assert Membership.objects.get(user=annotator).role == "annotator"


def test_revoking_from_the_page(lead_client, project, lead, client):
    created = invitation(project, lead)
    answer = lead_client.post(
        reverse("invitation-revoke", args=[project.slug, created.invitation.pk])
    )
    assert answer.status_code == 302
    assert Invitation.objects.get().revoked_at is not None
    assert client.get(reverse("invite", args=[created.token])).status_code == 404


# Access: every new URL with an id, for each kind of caller.


@pytest.fixture
def targets(project, lead):
    annotator = member("ann", project)
    created = invitation(project, lead)
    membership = Membership.objects.get(user=annotator)
    return [
        ("get", members_url(project), {}),
        ("post", members_url(project), {"role": "annotator", "days": 7}),
        ("post", reverse("member-update", args=[project.slug, membership.pk]), {"role": "lead"}),
        ("post", reverse("member-deactivate", args=[project.slug, membership.pk]), {}),
        ("post", reverse("invitation-revoke", args=[project.slug, created.invitation.pk]), {}),
    ]


def _state():
    return (
        sorted(Membership.objects.values_list("user__username", "project__slug", "role")),
        sorted(Invitation.objects.values_list("pk", "revoked_at")),
    )


def test_a_lead_of_another_project_gets_404_everywhere(client, tmp_path, targets):
    other = Project.objects.create(slug="other", name="Other")
    client.force_login(member("stranger", other, role="lead"))
    before = _state()
    for method, url, data in targets:
        assert getattr(client, method)(url, data).status_code == 404, url
    assert _state() == before


def test_a_lead_cannot_reach_another_projects_ids_through_their_own_project(
    client, tmp_path, project, targets
):
    other = Project.objects.create(slug="other", name="Other")
    client.force_login(member("stranger", other, role="lead"))
    before = _state()
    for method, url, data in targets[2:]:  # the same ids under the stranger's own slug
        own = url.replace(f"/projects/{project.slug}/", "/projects/other/")
        assert getattr(client, method)(own, data).status_code == 404, own
    assert _state() == before


def test_annotators_get_403(client, project, targets):
    client.force_login(User.objects.get(username="ann"))
    before = _state()
    for method, url, data in targets:
        assert getattr(client, method)(url, data).status_code == 403, url
    assert _state() == before


def test_anonymous_goes_to_the_login(client, targets):
    before = _state()
    for method, url, data in targets:
        answer = getattr(client, method)(url, data)
        assert answer.status_code == 302 and "/accounts/login/" in answer["Location"], url
    assert _state() == before


def test_posts_need_csrf(project, lead, targets):
    from django.test import Client

    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(lead)
    for method, url, data in targets:
        if method == "post":
            assert csrf_client.post(url, data).status_code == 403, url
    created = invitation(project, lead)
    anonymous = Client(enforce_csrf_checks=True)
    answer = _sign_up(anonymous, reverse("invite", args=[created.token]))
    assert answer.status_code == 403


def test_the_operator_manages_every_project(client, project, targets):
    client.force_login(User.objects.create_superuser("root", password=PASSWORD))
    assert client.get(members_url(project)).status_code == 200


# Escaping and the query budget.


def test_usernames_notes_and_names_are_escaped(lead_client, project, lead, other_task):
    hostile = "<script>alert(1)</script>"
    Project.objects.filter(pk=project.pk).update(name=f"Team {hostile}")
    project.refresh_from_db()
    user = User.objects.create_user("ann", password=PASSWORD, first_name=hostile)
    Membership.objects.create(user=user, project=project, role="annotator")
    invitation(project, lead, note=hostile, tasks=[other_task])
    body = lead_client.get(members_url(project)).content.decode()
    assert hostile not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "Editing &lt;b&gt;" in body
    created = invitation(project, lead)
    invite_page = lead_client.get(reverse("invite", args=[created.token])).content.decode()
    assert hostile not in invite_page and "Team &lt;script&gt;" in invite_page


def test_usernames_are_escaped(lead_client, project):
    # Django's validator refuses markup in new names; older or imported names may have it.
    user = User.objects.create_user("<img src=x onerror=alert(1)>", password=PASSWORD)
    Membership.objects.create(user=user, project=project, role="annotator")
    body = lead_client.get(members_url(project)).content.decode()
    assert "<img src=x" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body


# Session, user, project, role; members with counts, their tasks; former members;
# invitations, their tasks; the project's tasks for the members' rows and for the form;
# the pairs in progress; the tasks of the form that adds an existing account.
BUDGET = 14  # + the header's unread notifications


def test_the_members_page_has_a_fixed_query_budget(
    lead_client, project, lead, task, other_task, django_assert_max_num_queries
):
    def grow(count):
        base = User.objects.count()
        for i in range(count):
            user = member(f"m{base}-{i}", project)
            Membership.objects.get(user=user).tasks.set([task, other_task])
            assignment = assignment_claim(user, task)
            if assignment is not None:
                rating_submit(assignment.pk, user, RatingInput(overall=3))
            invitation(project, lead, tasks=[other_task])
        gone = member(f"gone{base}", project)
        Membership.objects.filter(user=gone).delete()

    grow(2)
    with django_assert_max_num_queries(BUDGET) as small:
        assert lead_client.get(members_url(project)).status_code == 200
    grow(6)
    with django_assert_max_num_queries(BUDGET) as large:
        assert lead_client.get(members_url(project)).status_code == 200
    assert len(large.captured_queries) == len(small.captured_queries)
