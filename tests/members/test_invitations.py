"""Invitations as services: one-time, expiring, revocable links whose token is never stored."""

import hashlib
import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.utils import IntegrityError
from django.utils import timezone

from annotation.services.members import membership_deactivate
from core.errors import Invalid, Refused
from projects.models import Invitation, Membership, Project, Task
from projects.services.invitations import (
    InvitationNotValid,
    invitation_accept,
    invitation_create,
    invitation_revoke,
)
from projects.services.members import membership_update
from tests.factories import invitation, invitation_expired, member
from tests.members.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def _accept(created, username="newbie", password=PASSWORD):
    return invitation_accept(token=created.token, username=username, password=password)


def test_accepting_makes_an_account_and_a_membership_with_the_role_and_tasks(
    project, task, other_task, lead
):
    created = invitation(
        project, lead, role="annotator", tasks=[other_task], email="ann@example.org"
    )
    membership = _accept(created)
    user = User.objects.get(username="newbie")
    assert membership.user == user and user.check_password(PASSWORD)
    assert user.email == ""  # the lead's unconfirmed address could reset the password
    assert membership.project == project and membership.role == "annotator"
    assert list(membership.tasks.all()) == [other_task]
    created.invitation.refresh_from_db()
    assert created.invitation.used_by == user and created.invitation.used_at is not None
    assert not user.is_superuser and not user.has_perm("projects.add_project")


def test_the_token_is_stored_only_as_its_sha256(project, lead):
    created = invitation(project, lead)
    stored = Invitation.objects.get()
    assert stored.token_hash == hashlib.sha256(created.token.encode()).hexdigest()
    assert len(created.token) >= 43  # 32 random bytes
    # Nowhere in the database: dump every table's text.
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
        for table in tables:
            cursor.execute(f'SELECT * FROM "{table}"')
            for row in cursor.fetchall():
                assert created.token not in repr(row), table


@pytest.mark.parametrize("make_unusable", ["use", "revoke", "expire", "unknown"])
def test_every_closed_link_answers_the_same(project, lead, make_unusable):
    created = invitation(project, lead)
    token = created.token
    if make_unusable == "use":
        _accept(created, username="first")
    elif make_unusable == "revoke":
        invitation_revoke(invitation=created.invitation)
    elif make_unusable == "expire":
        invitation_expired(created)
    else:
        token = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    with pytest.raises(InvitationNotValid) as refused:
        invitation_accept(token=token, username="second", password=PASSWORD)
    assert refused.value.message == "This invitation link is not valid any more."
    assert not User.objects.filter(username="second").exists()


def test_a_refused_account_leaves_the_link_open(project, lead):
    created = invitation(project, lead)
    with pytest.raises(Invalid) as invalid:
        _accept(created, password="123")
    assert "password" in invalid.value.fields
    member("taken", project)
    with pytest.raises(Invalid) as invalid:
        _accept(created, username="Taken")
    assert invalid.value.fields["username"] == ["This username is taken; choose another."]
    assert _accept(created).user.username == "newbie"


def test_a_signed_in_user_joins_with_their_account(project, lead, tmp_path):
    elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
    user = member("known", elsewhere)
    created = invitation(project, lead, role="lead")
    membership = invitation_accept(token=created.token, user=user)
    assert membership.role == "lead" and membership.user == user
    assert User.objects.count() == 2  # no new account


def test_a_member_already_keeps_their_membership_and_the_link_stays_open(project, lead):
    created = invitation(project, lead, role="lead")
    annotator = member("already", project)
    with pytest.raises(Refused, match="already a member"):
        invitation_accept(token=created.token, user=annotator)
    assert Membership.objects.get(user=annotator).role == "annotator"
    assert Invitation.objects.get().used_at is None


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"days": 0}, "days"),
        ({"days": 31}, "days"),
        ({"role": "owner"}, "role"),
        ({"email": "not-an-address"}, "email"),
        ({"note": "x" * 201}, "note"),
    ],
)
def test_bad_invitation_input_is_refused(project, lead, options, field):
    with pytest.raises(Invalid) as invalid:
        invitation_create(project=project, created_by=lead, **options)
    assert field in invalid.value.fields
    assert not Invitation.objects.exists()


def test_tasks_of_another_project_are_refused(project, lead):
    elsewhere = Project.objects.create(slug="elsewhere", name="Elsewhere")
    foreign = Task.objects.create(project=elsewhere, slug="x", name="X")
    with pytest.raises(Invalid) as invalid:
        invitation_create(project=project, created_by=lead, tasks=[foreign])
    assert "tasks" in invalid.value.fields


def test_the_expiry_defaults_to_seven_days_and_can_be_chosen(project, lead):
    default = invitation(project, lead).invitation
    month = invitation(project, lead, days=30).invitation
    assert abs((default.expires_at - timezone.now()).total_seconds() - 7 * 86400) < 60
    assert abs((month.expires_at - timezone.now()).total_seconds() - 30 * 86400) < 60


def test_a_used_invitation_cannot_be_revoked(project, lead):
    created = invitation(project, lead)
    _accept(created)
    with pytest.raises(Refused):
        invitation_revoke(invitation=created.invitation)


def test_the_database_refuses_a_used_and_revoked_invitation(project, lead):
    created = invitation(project, lead)
    now = timezone.now()
    with pytest.raises(IntegrityError):
        Invitation.objects.filter(pk=created.invitation.pk).update(used_at=now, revoked_at=now)


def test_a_second_accept_finds_the_link_used(project, lead):
    """The embedded database's version of the race below: one account, the second refused."""
    created = invitation(project, lead)
    _accept(created, username="winner")
    with pytest.raises(InvitationNotValid):
        _accept(created, username="loser")
    assert list(
        User.objects.filter(username__in=["winner", "loser"]).values_list("username", flat=True)
    ) == ["winner"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_two_concurrent_accepts_make_one_account(project, lead):
    created = invitation(project, lead)
    start = threading.Barrier(4)
    outcomes = []

    def accept(name):
        try:
            start.wait()
            _accept(created, username=name)
            outcomes.append("ok")
        except InvitationNotValid:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=accept, args=(f"racer{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["ok", "refused", "refused", "refused"]
    assert User.objects.filter(username__startswith="racer").count() == 1
    assert Membership.objects.filter(project=project, role="annotator").count() == 1


# Members: the last lead stays.


def test_the_last_lead_can_be_neither_removed_nor_demoted(project, lead):
    mine = Membership.objects.get(user=lead)
    with pytest.raises(Refused, match="last lead"):
        membership_deactivate(membership=mine)
    with pytest.raises(Refused, match="last lead"):
        membership_update(membership=mine, role="annotator", tasks=[])
    second = member("deputy", project, role="lead")
    membership_update(membership=mine, role="annotator", tasks=[])
    with pytest.raises(Refused, match="last lead"):
        membership_deactivate(membership=Membership.objects.get(user=second))
