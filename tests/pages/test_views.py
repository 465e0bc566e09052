"""Pages of the foundation: login, home, image serving, health check, admin access."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from content.models import Asset
from projects.models import Membership, Project
from tests.factories import mmrb2_pair, write_image, write_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported(tmp_path):
    from imports.services.pair_import import pairs_import

    write_image(tmp_path / "img" / "a.png", color=(10, 200, 10))
    write_image(tmp_path / "img" / "b.png", color=(200, 10, 10))
    source = write_jsonl(tmp_path / "pairs.jsonl", [mmrb2_pair("p1")])
    pairs_import(source, project_slug="views", task_slug="t2i", images_dir=tmp_path / "img")
    return Project.objects.get(slug="views")


def test_anonymous_home_redirects_to_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_login_page_has_standard_fields(client):
    body = client.get(reverse("login")).content.decode()
    assert 'name="username"' in body and 'name="password"' in body


def test_home_lists_the_users_projects_only(client, imported):
    user = User.objects.create_user("ann", password="pw-123456")
    Membership.objects.create(user=user, project=imported, role="annotator")
    Project.objects.create(slug="other", name="Secret other project")
    client.force_login(user)
    body = client.get("/").content.decode()
    assert "views" in body
    assert "Secret other project" not in body


def test_asset_is_served_with_its_real_content_type(client, imported):
    asset = Asset.objects.first()
    viewer = User.objects.create_user("viewer")
    client.force_login(viewer)
    # Only to those who may see a pair that shows it (tests/trust/test_assets_scope.py).
    assert client.get(reverse("asset-file", args=[asset.sha256])).status_code == 404
    Membership.objects.create(user=viewer, project=imported, role="lead")
    response = client.get(reverse("asset-file", args=[asset.sha256]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")


def test_asset_needs_login_and_unknown_hash_is_404(client, imported):
    asset = Asset.objects.first()
    assert client.get(reverse("asset-file", args=[asset.sha256])).status_code == 302
    client.force_login(User.objects.create_user("viewer"))
    assert client.get(reverse("asset-file", args=["0" * 64])).status_code == 404


def test_healthz_answers_without_login(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.content == b"ok"


def test_admin_pair_page_shows_thumbnails(client, imported):
    client.force_login(User.objects.create_superuser("root", password="pw-123456"))
    pair = imported.pairs.get()
    body = client.get(reverse("admin:content_pair_change", args=[pair.pk])).content.decode()
    for asset in Asset.objects.all():
        assert reverse("asset-file", args=[asset.sha256]) in body
    assert "prompt not available" in body  # the record has no prompt_content


def test_admin_is_closed_to_annotators(client):
    client.force_login(User.objects.create_user("ann"))
    response = client.get(reverse("admin:index"))
    assert response.status_code == 302
