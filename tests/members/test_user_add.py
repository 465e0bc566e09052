"""`manage.py user_add`: the operator's one shell step."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from projects.management.commands.user_add import Command
from projects.selectors import may_create_projects
from tests.members.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_lead_may_create_projects_and_is_no_superuser():
    out = io.StringIO()
    call_command("user_add", "leila", "--lead", "--password", PASSWORD, stdout=out)
    user = User.objects.get(username="leila")
    assert user.check_password(PASSWORD)
    assert user.has_perm("projects.add_project") and may_create_projects(user)
    assert not user.is_superuser and not user.is_staff
    assert "may create projects" in out.getvalue()


def test_an_operator_is_a_superuser():
    call_command("user_add", "root2", "--operator", "--password", PASSWORD, stdout=io.StringIO())
    user = User.objects.get(username="root2")
    assert user.is_superuser and user.is_staff


def test_a_plain_account_has_no_rights():
    call_command("user_add", "plain", "--password", PASSWORD, stdout=io.StringIO())
    user = User.objects.get(username="plain")
    assert not user.is_superuser and not user.has_perm("projects.add_project")


def test_the_password_can_come_from_stdin(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    call_command("user_add", "piped", "--password-stdin", stdout=io.StringIO())
    assert User.objects.get(username="piped").check_password(PASSWORD)


def test_without_a_terminal_and_without_a_password_it_refuses(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(CommandError, match="--password"):
        call_command("user_add", "nobody", stdout=io.StringIO())
    assert not User.objects.filter(username="nobody").exists()


@pytest.mark.parametrize("name", ["taken", "TAKEN"])
def test_an_existing_name_is_refused_in_any_case(name):
    User.objects.create_user("taken", password=PASSWORD)
    with pytest.raises(CommandError, match="username is taken"):
        call_command("user_add", name, "--lead", "--password", PASSWORD, stdout=io.StringIO())
    assert User.objects.filter(username__iexact="taken").count() == 1


@pytest.mark.parametrize(
    ("password", "words"),
    [("short", "too short"), ("password123", "too common"), ("48151623424815", "entirely numeric")],
)
def test_the_password_validators_run(password, words):
    with pytest.raises(CommandError, match=words):
        call_command("user_add", "weak", "--password", password, stdout=io.StringIO())
    assert not User.objects.filter(username="weak").exists()


def test_a_bad_name_is_refused():
    with pytest.raises(CommandError, match="username"):
        call_command("user_add", "a b", "--password", PASSWORD, stdout=io.StringIO())


def test_lead_and_operator_exclude_each_other():
    with pytest.raises(CommandError):
        call_command(
            "user_add", "both", "--lead", "--operator", "--password", PASSWORD, stdout=io.StringIO()
        )


def test_the_exit_code_is_not_zero_on_refusal(capsys):
    User.objects.create_user("taken", password=PASSWORD)
    with pytest.raises(SystemExit) as exit_:
        Command().run_from_argv(["manage.py", "user_add", "taken", "--password", PASSWORD])
    assert exit_.value.code not in (0, None)
    assert "user not created: username: This username is taken" in capsys.readouterr().err
