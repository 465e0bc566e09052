"""The images of the pair likely next: the annotate page
points at annotate-upcoming, which names the images of the pair the next claim would hand
out, so that the page can preload them while the expert rates. A guess that claims nothing,
only ever about a pair the annotator could be handed, 404 for anyone else's assignment."""

import re

import pytest
from django.urls import reverse

from annotation.gold.services import GoldEntry, gold_set
from annotation.models import Assignment
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from content.rendering import image_shas
from projects.models import Membership, Task
from projects.scale import to_canonical
from tests.factories import member, queued_pairs
from tests.responses import unmasked

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
HINT = re.compile(r'<span hidden data-upcoming="([^"]+)"></span>')


def upcoming(client, assignment_id: int):
    return client.get(reverse("annotate-upcoming", args=[assignment_id]))


def images_of(pair: Pair) -> set[str]:
    urls = image_shas(pair.prompt.content, pair.response_a.content, pair.response_b.content)
    return {reverse("asset-file", args=[sha]) for sha in urls}


def state(task) -> list[tuple]:
    """Every assignment and pair of the task as stored: what a guess must not change."""
    assignments = Assignment.objects.filter(pair__task=task).order_by("pk")
    pairs = Pair.objects.filter(task=task).order_by("pk")
    return [
        *assignments.values_list("pk", "pair_id", "annotator_id", "status", "lease_expires_at"),
        *pairs.values_list("pk", "status", "rating_count"),
    ]


def test_the_guess_names_the_images_of_the_pair_the_next_submit_brings(client, task):
    expert = member("expert", task.project)
    client.force_login(expert)
    location = client.post(reverse("task-next", args=["ann", "t2i"]))["Location"]
    for _ in range(3):
        current = int(location.rstrip("/").rsplit("/", 1)[1])
        before = state(task)
        response = upcoming(client, current)
        assert response.status_code == 200
        assert response["Cache-Control"].startswith("max-age=0")
        guessed = response.json()["images"]
        assert state(task) == before  # nothing leased, no slot taken, no status moved
        submitted = client.post(location, {"overall": "5"}, **HTMX)
        location = submitted["HX-Push-Url"]
        following = Assignment.objects.get(pk=location.rstrip("/").rsplit("/", 1)[1])
        assert guessed and set(guessed) == images_of(following.pair)
        for url in guessed:  # the annotator may load each of them: the pair is theirs to get
            assert client.get(url).status_code == 200


def test_a_gold_check_is_guessed_exactly_as_the_next_submit_brings_it(client, tmp_path):
    """Were a gold check never preloaded, the network panel would tell it from a real pair:
    the guess names the gold check the claim will serve, and changes nothing."""
    task = queued_pairs(tmp_path, count=16)
    pairs = list(Pair.objects.filter(task=task).order_by("-pk")[:5])
    gold_set(task, [GoldEntry(p.external_id, "A") for p in pairs], rate=0.5)  # one in two
    gold = {p.pk for p in pairs}
    expert = member("expert", task.project)
    client.force_login(expert)
    location = client.post(reverse("task-next", args=["ann", "t2i"]))["Location"]
    served = []
    for _ in range(10):
        current = int(location.rstrip("/").rsplit("/", 1)[1])
        before = state(task)
        guessed = upcoming(client, current).json()["images"]
        assert upcoming(client, current).json()["images"] == guessed  # asked again: the same
        assert state(task) == before  # no gold check handed out by the asking
        # The page preloads them while the current pair is still being rated: a gold check's
        # images load then as any pair's do, before the claim hands it out.
        assert [client.get(url).status_code for url in guessed] == [200] * len(guessed)
        location = client.post(location, {"overall": "5"}, **HTMX)["HX-Push-Url"]
        following = Assignment.objects.get(pk=location.rstrip("/").rsplit("/", 1)[1])
        assert guessed and set(guessed) == images_of(following.pair)
        served.append(following.pair_id in gold)
    assert sum(served) >= 3, served  # gold checks came, each of them guessed


def test_no_guess_on_any_pair_while_the_qualification_stands(client, tmp_path):
    """Which pair follows a qualification pair hangs on the answers: no guess for any of them
    (one answer for all of them tells nothing), and the usual guess once qualified."""
    task = queued_pairs(tmp_path, count=8)
    Task.objects.filter(pk=task.pk).update(qualification_required=True, qualification_pass=0.5)
    qualifying = list(Pair.objects.filter(task=task).order_by("pk")[:2])
    gold_set(task, [GoldEntry(p.external_id, "A", qualification=True) for p in qualifying])
    expert = member("newcomer", task.project)
    client.force_login(expert)
    location = client.post(reverse("task-next", args=["ann", "t2i"]))["Location"]
    for _ in range(2):
        current = Assignment.objects.get(pk=location.rstrip("/").rsplit("/", 1)[1])
        assert current.pair in qualifying
        assert upcoming(client, current.pk).json() == {"images": []}
        right = to_canonical(6, 7, current.swapped)  # A better, the expected side: they pass
        location = client.post(location, {"overall": right}, **HTMX)["HX-Push-Url"]
    current = int(location.rstrip("/").rsplit("/", 1)[1])
    assert Assignment.objects.get(pk=current).pair not in qualifying
    assert upcoming(client, current).json()["images"]


def test_the_page_and_the_next_pair_carry_the_hint_and_nothing_visible(client, task):
    expert = member("expert", task.project)
    client.force_login(expert)
    location = client.post(reverse("task-next", args=["ann", "t2i"]))["Location"]
    page = client.get(location).content.decode()
    current = int(location.rstrip("/").rsplit("/", 1)[1])
    assert HINT.findall(page) == [reverse("annotate-upcoming", args=[current])]
    guessed = upcoming(client, current).json()["images"]
    # The page names no image of the next pair: only the address to ask, once idle.
    assert not any(url in page for url in guessed)
    fragment = client.post(location, {"overall": "5"}, **HTMX).content.decode()
    following = Assignment.objects.filter(annotator=expert, status="leased").get()
    assert HINT.findall(fragment) == [reverse("annotate-upcoming", args=[following.pk])]


def test_no_hint_on_a_rated_pair_and_an_empty_guess_when_nothing_follows(client, tmp_path):
    task = queued_pairs(tmp_path, count=1)
    expert = member("expert", task.project)
    client.force_login(expert)
    only = assignment_claim(expert, task)
    assert upcoming(client, only.pk).json() == {"images": []}  # the queue's last pair
    rating_submit(only.pk, expert, RatingInput(overall=3))
    page = client.get(reverse("annotate", args=[only.pk])).content.decode()
    assert "data-upcoming" not in page  # correcting a rating leads back, not on
    assert upcoming(client, only.pk).json() == {"images": []}


def test_the_guess_skips_pairs_already_full_or_already_had(client, task):
    experts = [member(f"expert{i}", task.project) for i in range(4)]
    task.project.annotators_per_pair = 1
    task.project.save()
    pairs = list(Pair.objects.filter(task=task).order_by("draw"))  # the queue's order
    held = [assignment_claim(expert, task) for expert in experts[:3]]  # pairs 1-3 taken
    assert [a.pair_id for a in held] == [p.pk for p in pairs[:3]]
    client.force_login(experts[0])
    guessed = upcoming(client, held[0].pk).json()["images"]
    assert set(guessed) == images_of(pairs[3])  # not its own pair, not the full ones


def test_another_annotators_assignment_answers_like_a_missing_one(client, task):
    owner, other = member("owner", task.project), member("other", task.project)
    mine = assignment_claim(owner, task)
    client.force_login(other)
    assignment_claim(other, task)
    foreign, missing = upcoming(client, mine.pk), upcoming(client, 999_999)
    assert foreign.status_code == missing.status_code == 404
    assert unmasked(foreign.content) == unmasked(missing.content)
    client.logout()
    assert upcoming(client, mine.pk).status_code == 302  # a login first


def test_the_guess_costs_the_same_queries_whatever_the_queue(
    client, tmp_path, django_assert_num_queries
):
    # session, user, the assignment with its task and project, the next pair's contents, the
    # gold checks left to the user (none here; with some: their history, 2, and the one due)
    for count, slug in ((2, "small"), (30, "large")):
        task = queued_pairs(tmp_path, project_slug=slug, count=count)
        expert = member(f"budget-{slug}", task.project)
        client.force_login(expert)
        assignment = assignment_claim(expert, task)
        with django_assert_num_queries(5):
            assert upcoming(client, assignment.pk).status_code == 200


def test_the_guess_costs_a_bounded_number_of_queries_whatever_the_gold_checks(
    client, tmp_path, django_assert_max_num_queries
):
    # the five above, the user's gold history (2) and the contents of the gold check due
    for golds, slug in ((2, "few"), (20, "many")):
        task = queued_pairs(tmp_path, project_slug=slug, count=40)
        pairs = Pair.objects.filter(task=task).order_by("-pk")[:golds]
        gold_set(task, [GoldEntry(p.external_id, "A") for p in pairs], rate=0.5)
        expert = member(f"budget-{slug}", task.project)
        client.force_login(expert)
        for _ in range(3):  # a gold check falls due within two pairs at this rate
            assignment = assignment_claim(expert, task)
            with django_assert_max_num_queries(8):
                assert upcoming(client, assignment.pk).status_code == 200
            rating_submit(assignment.pk, expert, RatingInput(overall=3))


def test_no_guess_once_the_membership_no_longer_covers_the_task(client, tmp_path, task):
    expert = member("expert", task.project)
    held = assignment_claim(expert, task)
    client.force_login(expert)
    assert upcoming(client, held.pk).json()["images"]
    other_task = queued_pairs(tmp_path, task_slug="edit", count=2)
    Membership.objects.get(user=expert).tasks.set([other_task])  # a lead narrowed it
    assert upcoming(client, held.pk).json() == {"images": []}
