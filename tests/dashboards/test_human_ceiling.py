"""The judges page's human ceiling counts the same expert ratings as the agreement page: a
project whose only ratings came with an imported MMRB2 file has a ceiling too."""

import pytest
from django.urls import reverse

from imports.services.pair_import import pairs_import
from projects.models import Membership, Project
from tests.factories import mmrb2_pair, write_image, write_mmrb2

pytestmark = pytest.mark.django_db


@pytest.fixture
def imported_only(tmp_path, django_user_model):
    """MMRB2 pairs with their three experts' scores, nothing rated in Arbiter: on pair 3 one
    expert sides against the other two."""
    images = tmp_path / "images"
    for name, color in (("a.png", (200, 40, 40)), ("b.png", (40, 40, 200))):
        write_image(images / name, color)
    pairs = [
        mmrb2_pair("imp-1", scores=(5, 5, 6), chosen="A"),
        mmrb2_pair("imp-2", scores=(1, 2, 2), chosen="B"),
        mmrb2_pair("imp-3", scores=(5, 6, 2), chosen="A"),
        mmrb2_pair("imp-4", scores=(2, 1, 1), chosen="B"),
    ]
    source = write_mmrb2(tmp_path / "t2i.json", pairs)
    pairs_import(
        source, project_slug="imp", task_slug="t2i", file_format="mmrb2", images_dir=images
    )
    lead = django_user_model.objects.create_user("imp-lead")
    project = Project.objects.get(slug="imp")
    Membership.objects.create(user=lead, project=project, role=Membership.Role.LEAD)
    return project, lead


def test_imported_expert_ratings_give_the_judges_page_a_human_ceiling(client, imported_only):
    project, lead = imported_only
    client.force_login(lead)
    agreement = client.get(reverse("dash-agreement", args=[project.slug]))
    assert agreement.context["tasks"][0]["ratings"] == 12  # the agreement page counts them
    page = client.get(reverse("dash-judges", args=[project.slug]))
    ceiling = page.context["humans"][0]
    # By hand (6 points, centre 3.5): each rating against the side of the other two's mean;
    # on pair 3 the 2 misses (the others say A), the 5 hits (4 is A), the 6 has no reference
    # (3.5 is the centre); the other nine match.
    assert ceiling is not None
    assert ceiling["compared"] == 11 and ceiling["pairs"] == 4
    assert ceiling["accuracy"] == pytest.approx(10 / 11)
    body = page.content.decode()
    assert "0.909" in body
