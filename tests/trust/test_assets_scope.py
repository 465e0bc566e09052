"""An image is served only to users who may see a pair that shows it; for anyone else it
answers exactly like a hash that does not exist, on the page URL and on the API."""

import hashlib
import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.selectors.assets import asset_for_user
from annotation.services.assignments import assignment_claim
from content.models import Asset, Pair
from imports.services.pair_import import pairs_import
from projects.models import Membership, Project, Task
from tests.api.conftest import token_client
from tests.factories import member, write_image, write_jsonl
from tests.responses import unmasked

pytestmark = pytest.mark.django_db
MISSING = "0" * 64


def _project(folder, slug: str, colour: int, tasks=("t2i",), shared: str | None = None):
    """A project whose pairs each show two images of their own (distinct from every other
    project's unless `shared` names a file to use as pair 0's response A image)."""
    images = folder / f"images-{slug}"
    for number, task_slug in enumerate(tasks):
        records = []
        for i in range(2):
            write_image(images / f"{task_slug}-a{i}.png", (colour, i, 10 * number), size=(12, 10))
            write_image(
                images / f"{task_slug}-b{i}.png", (colour, i, 10 * number + 1), size=(10, 12)
            )
            image_a = f"{task_slug}-a{i}.png"
            if shared and i == 0:
                (images / "shared.png").write_bytes(shared.read_bytes())
                image_a = "shared.png"
            records.append(
                {
                    "id": f"{slug}-{task_slug}-{i}",
                    "prompt_content": [["text", f"draw {i}"]],
                    "response_a": {"model_name": "m1", "response_content": [["image", image_a]]},
                    "response_b": {
                        "model_name": "m2",
                        "response_content": [["image", f"{task_slug}-b{i}.png"]],
                    },
                }
            )
        source = write_jsonl(folder / f"{slug}-{task_slug}.jsonl", records)
        pairs_import(source, project_slug=slug, task_slug=task_slug, images_dir=images)
    project = Project.objects.get(slug=slug)
    Pair.objects.filter(project=project).update(status=Pair.Status.QUEUED)
    return project, images


def _shas(pair: Pair) -> list[str]:
    return [value for kind, value in pair.response_a.content + pair.response_b.content]


def _fetch(user, sha256: str) -> list[tuple[int, bytes]]:
    """(status, body) from the page URL and from the API."""
    page = Client()
    page.force_login(user)
    answers = [page.get(f"/assets/{sha256}"), token_client(user).get(f"/api/assets/{sha256}/")]
    return [
        (
            answer.status_code,
            unmasked(b"".join(answer.streaming_content) if answer.streaming else answer.content),
        )
        for answer in answers
    ]


def _assert_hidden(user, sha256: str) -> None:
    assert _fetch(user, sha256) == _fetch(user, MISSING)
    assert [status for status, _ in _fetch(user, MISSING)] == [404, 404]


def _assert_served(user, sha256: str) -> None:
    assert [status for status, _ in _fetch(user, sha256)] == [200, 200]


@pytest.fixture
def two(tmp_path):
    """Projects `pa` (tasks t1, t2) and `pb` (task t1), images of their own."""
    pa, images_a = _project(tmp_path, "pa", 10, tasks=("t1", "t2"))
    pb, _ = _project(tmp_path, "pb", 20)
    pairs_a = list(Pair.objects.filter(project=pa).select_related("response_a", "response_b"))
    return pa, pb, pairs_a, images_a


def test_outsiders_and_other_projects_get_the_404_of_a_missing_hash(two):
    pa, pb, pairs_a, _ = two
    outsider = User.objects.create_user("outsider")
    lead_b = member("lead_b", pb, role=Membership.Role.LEAD)
    annotator_b = member("ann_b", pb)
    for user in (outsider, lead_b, annotator_b):
        for sha256 in _shas(pairs_a[0]):
            _assert_hidden(user, sha256)
    # Not a hash at all: the same answer again.
    assert _fetch(outsider, "not-a-hash")[1] == _fetch(outsider, MISSING)[1]


def test_members_of_the_project_get_its_images(two):
    pa, pb, pairs_a, _ = two
    lead = member("lead_a", pa, role=Membership.Role.LEAD)
    annotator = member("ann_a", pa)
    admin = User.objects.create_superuser("root")
    for user in (lead, annotator, admin):
        for pair in pairs_a:
            for sha256 in _shas(pair):
                _assert_served(user, sha256)


def test_an_annotator_sees_what_they_may_be_assigned_or_hold(two):
    pa, pb, pairs_a, _ = two
    annotator = member("ann_t1", pa)
    t1, t2 = Task.objects.get(project=pa, slug="t1"), Task.objects.get(project=pa, slug="t2")
    Membership.objects.get(user=annotator, project=pa).tasks.set([t1])
    assignment = assignment_claim(annotator, t1)
    held = Pair.objects.get(pk=assignment.pair_id)
    open_t1 = next(p for p in pairs_a if p.task_id == t1.pk and p.pk != held.pk)
    other_task = next(p for p in pairs_a if p.task_id == t2.pk)
    for sha256 in _shas(open_t1) + _shas(held):
        _assert_served(annotator, sha256)
    for sha256 in _shas(other_task):  # a task their membership does not cover
        _assert_hidden(annotator, sha256)
    # Pairs out of the queue: the one they hold stays visible, the other goes.
    Pair.objects.filter(pk__in=[held.pk, open_t1.pk]).update(status=Pair.Status.COMPLETE)
    for sha256 in _shas(held):
        _assert_served(annotator, sha256)
    for sha256 in _shas(open_t1):
        _assert_hidden(annotator, sha256)
    # Leaving the project takes everything.
    Membership.objects.filter(user=annotator).delete()
    for sha256 in _shas(held):
        _assert_hidden(annotator, sha256)


def test_quoting_a_hash_in_text_grants_nothing(two, tmp_path):
    pa, pb, pairs_a, _ = two
    lead_b = member("lead_b", pb, role=Membership.Role.LEAD)
    stolen = _shas(pairs_a[0])[0]
    pair_b = Pair.objects.filter(project=pb).select_related("response_a").first()
    pair_b.response_a.content = [["text", stolen], *pair_b.response_a.content]
    pair_b.response_a.save()
    _assert_hidden(lead_b, stolen)


def test_an_image_shared_by_two_projects_is_seen_from_both(tmp_path):
    first, images = _project(tmp_path, "first", 30)
    second, _ = _project(tmp_path, "second", 40, shared=images / "t2i-a0.png")
    shared = hashlib.sha256((images / "t2i-a0.png").read_bytes()).hexdigest()
    assert Asset.objects.filter(sha256=shared).count() == 1
    _assert_served(member("lead_second", second, role=Membership.Role.LEAD), shared)
    _assert_hidden(member("lead_third", _project(tmp_path, "third", 50)[0]), shared)


def test_the_scope_check_is_one_query_and_the_asset_one_more(two, django_assert_num_queries):
    pa, pb, pairs_a, _ = two
    annotator = member("ann_a", pa)
    lead_b = member("lead_b", pb, role=Membership.Role.LEAD)
    sha256 = _shas(pairs_a[-1])[1]
    with django_assert_num_queries(2):  # the pairs in scope naming it, then the asset
        assert asset_for_user(annotator, sha256).sha256 == sha256
    with django_assert_num_queries(1):
        assert asset_for_user(lead_b, sha256) is None
    with django_assert_num_queries(1):
        assert asset_for_user(annotator, MISSING) is None


def test_an_image_of_another_project_costs_the_same_work_as_a_missing_one(tmp_path):
    # Scope before existence: an outsider must not tell an image that exists elsewhere from a
    # random hash by the time it takes (the same queries, with only the hash differing).
    _project(tmp_path, "alpha", 10)
    _project(tmp_path, "beta", 200)
    outsider = member("outsider", Project.objects.get(slug="beta"), role="lead")
    elsewhere = _shas(Pair.objects.filter(project__slug="alpha").first())[0]
    assert Asset.objects.filter(sha256=elsewhere).exists()

    def queries(sha256: str) -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            assert asset_for_user(outsider, sha256) is None
        # PostgreSQL's server-side cursors are named per call: only the name may differ.
        return [
            re.sub(r"_django_curs_\w+", "<cursor>", query["sql"].replace(sha256, "<sha>"))
            for query in captured.captured_queries
        ]

    assert queries(elsewhere) == queries(MISSING)
