"""Imported ratings belong to placeholder accounts, which are no one's: no person can get
one by its name, sign in as one, list its assignments or change its ratings."""

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Assignment, Rating
from annotation.services.assignments import AssignmentNotFound
from annotation.services.ratings import RatingInput, rating_submit
from content.importing.errors import ImportFailed
from imports.services.pair_import import pairs_import
from projects.models import ApiToken, Membership, PlaceholderAccount
from tests.factories import api_key, invitation, member, mmrb2_pair, write_image, write_jsonl

pytestmark = pytest.mark.django_db

PASSWORD = "violet-harbour-lantern-42"  # passes Django's password validators


@pytest.fixture(autouse=True)
def _fresh_limits():
    cache.clear()  # sign-in and invitation counters
    yield
    cache.clear()


def _import_rated(folder, project_slug="team", count=2):
    """Import `count` pairs each rated by three experts (placeholders 1, 2, 3)."""
    write_image(folder / "a.png", color=(200, 40, 40))
    write_image(folder / "b.png", color=(40, 40, 200))
    rows = [mmrb2_pair(f"p{i}", scores=(5, 6, 5)) for i in range(count)]
    source = write_jsonl(folder / f"rated-{project_slug}.jsonl", rows)
    return pairs_import(source, project_slug=project_slug, task_slug="t2i", images_dir=folder)


def _operator_revives(username) -> User:
    """What an operator could do in the admin: activate the account and give it a password."""
    user = User.objects.get(username=username)
    user.is_active = True
    user.set_password(PASSWORD)
    user.save()
    return user


def test_an_invitee_cannot_sign_up_under_a_placeholders_name(client, tmp_path):
    _import_rated(tmp_path)
    project = PlaceholderAccount.objects.first().project
    lead = member("boss", project, role="lead")
    for name in ("imported-team-9", "Imported-Team-1"):
        created = invitation(project, lead)
        answer = client.post(
            reverse("invite", args=[created.token]),
            {"username": name, "password1": PASSWORD, "password2": PASSWORD},
        )
        assert answer.status_code == 400
        assert b"kept for imported ratings" in answer.content
        assert not User.objects.filter(username=name).exists()


def test_user_add_refuses_a_placeholders_name():
    with pytest.raises(CommandError, match="kept for imported ratings"):
        call_command("user_add", "imported-team-1", password=PASSWORD)
    assert not User.objects.filter(username="imported-team-1").exists()


def test_an_import_never_hands_ratings_to_a_persons_account_of_that_name(tmp_path):
    # A person's account named like a placeholder, made before such names were refused (or
    # by an operator in the admin), and a member of the project with an API token.
    _import_rated(tmp_path / "first", project_slug="team", count=1)
    project = PlaceholderAccount.objects.first().project
    person = member("imported-team-4", project)
    key = api_key(person)
    folder = tmp_path / "second"
    write_image(folder / "a.png")
    write_image(folder / "b.png", color=(1, 2, 3))
    rows = [mmrb2_pair("q0", scores=(5, 6, 5)), mmrb2_pair("q1", scores=(5, 6, 5, 4))]
    source = write_jsonl(folder / "more.jsonl", rows)

    with pytest.raises(ImportFailed) as refused:
        pairs_import(source, project_slug="team", task_slug="t2i", images_dir=folder)

    assert "record 2" in str(refused.value) and "'imported-team-4'" in str(refused.value)
    assert not Rating.objects.filter(annotator=person).exists()
    assert not PlaceholderAccount.objects.filter(user=person).exists()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/assignments/").json()["count"] == 0


def test_placeholders_are_marked_as_such_and_reused_by_the_next_import(tmp_path):
    _import_rated(tmp_path / "first")
    _import_rated(tmp_path / "second", count=3)  # new ids: three more pairs
    marked = PlaceholderAccount.objects.select_related("user", "project")
    assert sorted(p.user.username for p in marked) == [
        "imported-team-1",
        "imported-team-2",
        "imported-team-3",
    ]
    assert {p.project.slug for p in marked} == {"team"}
    assert all(not p.user.is_active and not p.user.has_usable_password() for p in marked)


def test_a_placeholder_cannot_sign_in_even_when_an_operator_revived_it(tmp_path):
    _import_rated(tmp_path)
    _operator_revives("imported-team-1")
    page = Client(REMOTE_ADDR="192.0.2.7").post(
        reverse("login"), {"username": "imported-team-1", "password": PASSWORD}
    )
    assert page.status_code == 200  # the form again, not the redirect of a sign-in
    assert "_auth_user_id" not in page.wsgi_request.session
    token = APIClient().post(
        "/api/auth/token/", {"username": "imported-team-1", "password": PASSWORD}, format="json"
    )
    assert token.status_code == 400
    assert not ApiToken.objects.exists()


def test_a_placeholders_rating_cannot_be_changed_by_the_rating_service(tmp_path):
    _import_rated(tmp_path)
    placeholder = _operator_revives("imported-team-1")
    assignment = Assignment.objects.filter(annotator=placeholder).first()
    before = Rating.objects.get(assignment=assignment).overall

    with pytest.raises(AssignmentNotFound):
        rating_submit(assignment.pk, placeholder, RatingInput(overall="1"))

    assert Rating.objects.get(assignment=assignment).overall == before


def test_a_placeholders_assignments_are_no_ones_in_the_api(tmp_path):
    # The worst an operator could leave: the placeholder active, a member, with a token.
    _import_rated(tmp_path)
    placeholder = _operator_revives("imported-team-1")
    project = PlaceholderAccount.objects.get(user=placeholder).project
    Membership.objects.create(user=placeholder, project=project, role="annotator")
    other = member("ann", project)
    assignment = Assignment.objects.filter(annotator=placeholder).first()
    before = Rating.objects.get(assignment=assignment).overall

    for user in (placeholder, other):
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
        assert api.get("/api/assignments/").json()["count"] == 0
        answer = api.post(f"/api/assignments/{assignment.pk}/rating/", {"overall": 1})
        assert answer.status_code == 404
        assert api.get(f"/api/assignments/{assignment.pk}/").status_code == 404

    assert Rating.objects.get(assignment=assignment).overall == before


@pytest.fixture
def before_placeholder_accounts():
    """The schema before 0016, and every migration again afterwards (for the next tests)."""
    executor = MigrationExecutor(connection)
    executor.migrate([("annotation", "0015_import_job_attempts")])
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_upgrading_marks_the_accounts_earlier_imports_made_and_no_person(
    before_placeholder_accounts,
):
    made = User(username="imported-team-1", is_active=False)
    made.set_unusable_password()
    made.save()
    User.objects.create_user("imported-team-2", password=PASSWORD)  # a person's
    User.objects.create_user("imported-team-3", password=PASSWORD, is_active=False)
    unusable = User(username="imported-team-4")  # active: a person's, as the operator left it
    unusable.set_unusable_password()
    unusable.save()

    executor = MigrationExecutor(connection)
    executor.migrate([("annotation", "0016_placeholder_accounts")])

    marked = PlaceholderAccount.objects.values_list("user__username", flat=True)
    assert list(marked) == ["imported-team-1"]


@pytest.mark.parametrize(
    "name", ["ｉｍｐｏｒｔｅｄ-team-1", "ⅰmported-team-1", "ｉmported-lead-team"]
)
def test_a_placeholders_name_in_other_unicode_forms_is_refused_too(name):
    # Django stores names NFKC-normalised: these would be saved as "imported-…".
    with pytest.raises(CommandError, match="kept for imported ratings"):
        call_command("user_add", name, password=PASSWORD)
    assert not User.objects.filter(username__startswith="imported-").exists()


def test_one_projects_placeholder_never_takes_another_projects_ratings(tmp_path):
    from imports.services.pair_import_ratings import placeholder_users
    from projects.models import Project

    # "imported-lead-a" is project a's adjudicator and project lead's rater "a".
    first = Project.objects.create(slug="a", name="a")
    second = Project.objects.create(slug="lead", name="lead")
    placeholder_users(first, {"imported-lead-a": None})
    with pytest.raises(ImportFailed, match="holds another project's imported ratings"):
        placeholder_users(second, {"imported-lead-a": 3})
    assert placeholder_users(first, {"imported-lead-a": None})  # its own project reuses it
