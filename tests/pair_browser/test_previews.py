"""The rows of the pair browser and of the disagreement queue show what a lead recognises a
pair by: the prompt's text (whole in its title), small images of both responses through the
scoped thumbnail URL (lazy, with their size set), the generators' names; the columns are chosen
in the query string, and the page's query count does not grow with them."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from content.models import Pair

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def thumbnails(body: str) -> list[str]:
    return re.findall(r'<img src="/assets/[0-9a-f]{64}/thumb"[^>]*>', body)


def test_a_row_shows_the_prompt_the_images_and_the_generators(browsed):
    project, lead = browsed
    client = signed_in(lead)
    body = client.get(reverse("dash-pairs", args=[project.slug]) + "?task=edit").content.decode()
    assert body.count('<span class="pair-prompt" title="Draw scene number') == 4
    assert "Draw scene number 2, *please*</span>" in body
    images = thumbnails(body)
    assert len(images) == 8  # A and B of 4 pairs
    for tag in images:
        assert 'loading="lazy"' in tag
        # 40×30 and 30×40 images, shown at their own size (they fit in 48 px)
        assert re.search(r'width="(40|30)" height="(30|40)"', tag), tag
    # The thumbnail URL answers the lead, scoped as the pair page's image URL.
    src = re.search(r'src="([^"]+)"', images[0]).group(1)
    assert client.get(src).status_code == 200
    assert body.count("secretmodelA") >= 4 and body.count("secretmodelB") >= 4


def test_a_large_image_is_shrunk_to_fit_and_a_long_prompt_is_whole_in_the_title(browsed, tmp_path):
    from tests.factories import queued_pairs

    project, lead = browsed
    queued_pairs(tmp_path, project_slug=project.slug, task_slug="big", count=1,
                 image_size=(960, 480))  # fmt: skip
    pair = Pair.objects.get(task__slug="big")
    long_text = "A very long prompt " * 30
    pair.prompt.content = [["text", long_text]]
    pair.prompt.save()
    body = (
        signed_in(lead)
        .get(reverse("dash-pairs", args=[project.slug]) + "?task=big")
        .content.decode()
    )
    sizes = [re.search(r'width="(\d+)" height="(\d+)"', tag).groups() for tag in thumbnails(body)]
    assert sorted(sizes) == [("24", "48"), ("48", "24")]
    assert f'title="{" ".join(long_text.split())}"' in body


def test_the_columns_are_chosen_and_a_bad_one_is_a_400(browsed):
    project, lead = browsed
    client = signed_in(lead)
    url = reverse("dash-pairs", args=[project.slug])
    narrow = client.get(url + "?cols=task&cols=marks").content.decode()
    assert "pair-prompt" not in narrow and not thumbnails(narrow)
    assert "<th>Task</th>" in narrow and "<th>Marks</th>" in narrow
    assert "<th>Mean</th>" not in narrow
    # The links of the page keep the columns (one value, comma-separated).
    assert "cols=task%2Cmarks" in narrow
    assert client.get(url + "?cols=task,password").status_code == 400


def test_the_disagreement_queue_shows_the_prompt_images_and_generators(browsed):
    project, lead = browsed
    body = (
        signed_in(lead)
        .get(reverse("dash-disagreements", args=[project.slug]) + "?state=all")
        .content.decode()
    )
    rows = body.count("data-row-open")
    assert rows > 0
    assert body.count('class="pair-prompt" title="Draw scene number') == rows
    assert len(thumbnails(body)) == 2 * rows
    assert body.count("secretmodelA") >= rows
