"""The annotator's pages: access, blinding, escaping, the htmx and plain-form flows."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import Assignment, Rating
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair, Prompt, Response
from projects.models import Membership, Task
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def next_url(task):
    return reverse("task-next", args=[task.project.slug, task.slug])


def annotate_url(assignment):
    return reverse("annotate", args=[assignment.pk])


@pytest.fixture
def annotator(task):
    return member("expert", task.project)


def test_pages_need_a_login(client, task, annotator):
    assignment = assignment_claim(annotator, task)
    for url in (next_url(task), annotate_url(assignment)):
        for method in (client.get, client.post):
            response = method(url)
            assert response.status_code == 302
            assert response["Location"].startswith(reverse("login"))


def test_home_shows_each_task_with_progress_and_a_start_button(client, task, annotator):
    rate_one = assignment_claim(annotator, task)
    rating_submit(rate_one.pk, annotator, RatingInput(overall=3))
    client.force_login(annotator)
    body = client.get("/").content.decode()
    assert task.name in body
    assert 'data-label="Rated">1</td>' in body and 'data-label="Remaining">5</td>' in body
    assert next_url(task) in body and "Continue" in body


def test_users_outside_the_project_or_the_task_get_404(client, tmp_path, task):
    outsider = User.objects.create_user("outsider", password="pw-annotate-1")
    client.force_login(outsider)
    assert client.post(next_url(task)).status_code == 404
    other_task = queued_pairs(tmp_path, task_slug="edit", count=1)
    limited = member("limited", task.project)
    Membership.objects.get(user=limited).tasks.set([other_task])
    client.force_login(limited)
    assert client.post(next_url(task)).status_code == 404
    assert client.post(next_url(other_task)).status_code == 302


def test_another_annotators_assignment_answers_404(client, task, annotator):
    owner = member("owner", task.project)
    theirs = assignment_claim(owner, task)
    client.force_login(annotator)
    assert client.get(annotate_url(theirs)).status_code == 404
    assert client.post(annotate_url(theirs), {"overall": "1"}).status_code == 404
    assert (
        client.post(annotate_url(theirs), {"action": "skip", "skip_reason": "x"}).status_code == 404
    )
    assert not Rating.objects.exists()
    assert Assignment.objects.get(pk=theirs.pk).status == "leased"
    assert client.get(reverse("annotate", args=[999999])).status_code == 404


def test_a_member_who_left_the_project_loses_their_assignments(client, task, annotator):
    assignment = assignment_claim(annotator, task)
    Membership.objects.filter(user=annotator).delete()
    client.force_login(annotator)
    assert client.get(annotate_url(assignment)).status_code == 404


def test_start_claims_and_redirects_to_the_pair(client, task, annotator):
    client.force_login(annotator)
    response = client.post(next_url(task))
    assignment = Assignment.objects.get(annotator=annotator)
    assert response.status_code == 302 and response["Location"] == annotate_url(assignment)


def test_the_page_is_blinded(client, task, annotator):
    owner = member("owner", task.project)
    rated = assignment_claim(owner, task)
    rating_submit(rated.pk, owner, RatingInput(overall=2, rationale="owner-private-note"))
    client.force_login(annotator)
    body = client.get(client.post(next_url(task))["Location"]).content.decode()
    assert "Left" in body and "Right" in body
    for secret in ("secretmodel", "-vs-", "owner-private-note", "owner", "Verdict", "judge"):
        assert secret not in body, secret


def test_text_is_escaped_with_basic_markdown_and_no_links(client, tmp_path, task, annotator):
    pair = Pair.objects.filter(task=task).first()
    Response.objects.filter(pk=pair.response_a_id).update(
        content=[["text", "<script>alert(1)</script> **bold**\nline two [x](javascript:alert(1))"]]
    )
    Task.objects.filter(pk=task.pk).update(
        guidelines="# Rules\n<img src=x onerror=alert(1)> *be fair*"
    )
    assignment = Assignment.objects.create(pair=pair, annotator=annotator)
    client.force_login(annotator)
    body = client.get(annotate_url(assignment)).content.decode()
    assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<strong>bold</strong><br" in body
    assert 'href="javascript' not in body, body[body.find('href="javascript') - 200 :][:400]
    assert "<img src=x" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    assert "<h1>Rules</h1>" in body and "<em>be fair</em>" in body


def test_an_unavailable_prompt_shows_its_source_and_metadata(client, task, annotator):
    pair = Pair.objects.filter(task=task).first()
    Prompt.objects.filter(pk=pair.prompt_id).update(
        content=None, source="genai-bench", metadata={"prompt_id": "p-<42>"}
    )
    assignment = Assignment.objects.create(pair=pair, annotator=annotator)
    client.force_login(annotator)
    body = client.get(annotate_url(assignment)).content.decode()
    assert "not shipped with this pair" in body and "genai-bench" in body
    assert "p-&lt;42&gt;" in body


def test_plain_post_stores_the_rating_and_redirects_to_the_next_pair(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    response = client.post(first, {"overall": "6", "aspect_quality": "2", "rationale": "why"})
    assert response.status_code == 302 and response["Location"] != first
    rating = Rating.objects.get(annotator=annotator)
    assert rating.rationale == "why" and rating.aspect_scores.count() == 1
    assert response["Location"] == annotate_url(Assignment.objects.get(status="leased"))


def test_htmx_post_answers_with_the_next_pair_fragment(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    response = client.post(first, {"overall": "4"}, **HTMX)
    body = response.content.decode()
    following = Assignment.objects.get(annotator=annotator, status="leased")
    assert response.status_code == 200
    assert response["HX-Push-Url"] == annotate_url(following)
    assert body.startswith('<section id="workspace"') and "<html" not in body
    assert f'data-assignment="{following.pk}"' in body


def test_a_submit_without_overall_keeps_the_entries_and_stores_nothing(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    response = client.post(first, {"aspect_quality": "5", "rationale": "half done"}, **HTMX)
    body = response.content.decode()
    assert response.status_code == 422
    assert "choose an overall preference" in body
    assert 'value="5" checked' in body and "half done" in body
    assert not Rating.objects.exists()


def test_skip_and_flag_from_the_page(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    response = client.post(first, {"action": "skip", "skip_reason": "not my field"})
    assert response.status_code == 302
    second = response["Location"]
    client.post(second, {"action": "flag", "flag_reason": "unsafe", "flag_note": "gore"})
    statuses = list(Assignment.objects.filter(annotator=annotator).values_list("status", flat=True))
    assert statuses.count("skipped") == 2
    refused = client.post(client.get(next_url(task))["Location"], {"action": "skip"}, **HTMX)
    assert refused.status_code == 409 and "why you skip" in refused.content.decode()


@pytest.mark.parametrize(
    ("posted", "stored"),
    [
        ({"skip_reason": "Outside my expertise"}, "Outside my expertise"),
        (
            {"skip_reason": "Outside my expertise", "skip_note": " chem "},
            "Outside my expertise: chem",
        ),
        ({"skip_reason": "other", "skip_note": "a duplicate pair"}, "a duplicate pair"),
    ],
)  # fmt: skip
def test_a_skip_takes_a_preset_reason_and_an_optional_note(client, task, annotator, posted, stored):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    client.post(first, {"action": "skip", **posted}, **HTMX)
    assert Assignment.objects.get(annotator=annotator, status="skipped").skip_reason == stored


def test_other_without_a_note_is_refused_with_a_way_on(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    refused = client.post(first, {"action": "skip", "skip_reason": "other"}, **HTMX)
    body = refused.content.decode()
    assert refused.status_code == 409 and "why you skip" in body
    assert f'href="{next_url(task)}"' in body  # "Go to your next pair"
    assert Assignment.objects.get(annotator=annotator).status == "leased"


def test_a_stale_form_answers_409_with_a_link_to_the_next_pair(client, tmp_path, task, annotator):
    """The Back button used to show a rated pair as an empty form; a submit from such a page
    on a pair that is now final says so and offers the way on."""
    Assignment.objects.all().delete()
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    client.post(first, {"overall": "2"})
    assignment = Assignment.objects.get(annotator=annotator, status="submitted")
    Pair.objects.filter(pk=assignment.pair_id).update(
        status=Pair.Status.KEPT, decided_by=Pair.DecidedBy.ADJUDICATION
    )
    response = client.post(first, {"overall": "6"}, **HTMX)
    body = response.content.decode()
    assert response.status_code == 409 and "can no longer change" in body
    assert f'href="{next_url(task)}"' in body


def test_recent_ratings_can_be_reopened_and_changed(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    client.post(first, {"overall": "2"})
    page = client.get(client.get(next_url(task))["Location"]).content.decode()
    assert first in page  # listed under "Recent ratings"
    reopened = client.get(first).content.decode()
    assert 'value="2" checked' in reopened and "Save changes" in reopened
    client.post(first, {"overall": "5"})
    assignment = Assignment.objects.get(pk=int(first.rstrip("/").rsplit("/", 1)[1]))
    assert Rating.objects.get(assignment=assignment).overall == (5 if assignment.swapped else 3)


def test_recent_ratings_name_the_prompt_and_the_score_given(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    client.post(first, {"overall": "1"})
    current = client.get(next_url(task))["Location"]
    page = client.get(current).content.decode()
    prompt = Pair.objects.get(assignments__annotator=annotator, assignments__status="submitted")
    assert prompt.prompt.content[0][1].split("*")[0].strip() in page
    assert "<strong>Left much better</strong>" in page
    current_id = current.rstrip("/").rsplit("/", 1)[1]
    assert f'{first}?from={current_id}"' in page
    # Beyond the last few: every rating of the task, on the annotator's own list.
    own = reverse("own-ratings", args=[task.project.slug]) + f"?task={task.slug}"
    assert f'href="{own}"' in page
    assert client.get(own).status_code == 200


def test_save_changes_returns_to_the_pair_the_annotator_was_on(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    client.post(first, {"overall": "1"})
    current = client.get(next_url(task))["Location"]
    current_id = current.rstrip("/").rsplit("/", 1)[1]
    reopened = client.get(f"{first}?from={current_id}").content.decode()
    assert f'name="return_to" value="{current_id}"' in reopened
    response = client.post(first, {"overall": "2", "return_to": current_id}, **HTMX)
    assert response["HX-Push-Url"] == current
    assert f'data-assignment="{current_id}"' in response.content.decode()
    assert "Changes saved." in response.content.decode()


def test_return_to_another_annotators_assignment_is_ignored(client, task, annotator):
    other = member("other", task.project)
    theirs = assignment_claim(other, task)
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    response = client.post(first, {"overall": "1", "return_to": str(theirs.pk)}, **HTMX)
    assert f'data-assignment="{theirs.pk}"' not in response.content.decode()
    assert response["HX-Push-Url"] != annotate_url(theirs)
    assert "secretmodel" not in response.content.decode()


def test_the_annotate_page_is_never_cached(client, task, annotator):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    response = client.get(first)
    assert "no-store" in response["Cache-Control"]
    assert '"historyCacheSize":0' in response.content.decode()


def test_the_done_page_when_nothing_is_left(client, tmp_path):
    task = queued_pairs(tmp_path, count=1)
    user = member("solo", task.project)
    client.force_login(user)
    first = client.post(next_url(task))["Location"]
    response = client.post(first, {"overall": "1"}, **HTMX)
    assert "nothing left for you" in response.content.decode()
    assert "Rating saved." in response.content.decode()
    assert response["HX-Push-Url"] == next_url(task)
    assert "nothing left for you" in client.get(next_url(task)).content.decode()


def test_the_done_page_offers_the_next_task_with_pairs_left(client, tmp_path):
    task = queued_pairs(tmp_path, count=1)
    other = queued_pairs(tmp_path, task_slug="edit", count=2)
    user = member("solo", task.project)
    client.force_login(user)
    first = client.post(next_url(task))["Location"]
    body = client.post(first, {"overall": "1"}, **HTMX).content.decode()
    assert "Next task: edit" in body and "(2 pairs left)" in body
    assert f'action="{next_url(other)}"' in body


def test_annotators_cannot_reach_the_admin(client, annotator):
    client.force_login(annotator)
    response = client.get("/admin/annotation/rating/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_link_to_the_next_pair_claims_nothing_until_the_annotator_posts(client, task, annotator):
    # A GET (a link on another site, a prefetch) must not make the annotator claim a pair.
    client.force_login(annotator)
    page = client.get(next_url(task))
    assert page.status_code == 200
    assert not Assignment.objects.filter(annotator=annotator).exists()
    assert f'<form method="post" action="{next_url(task)}">' in page.content.decode()
    claimed = client.post(next_url(task))["Location"]
    assert Assignment.objects.filter(annotator=annotator).count() == 1
    assert client.get(next_url(task))["Location"] == claimed  # the pair held, not a new one
    assert Assignment.objects.filter(annotator=annotator).count() == 1


@pytest.mark.parametrize("value", ["²", "٣", "1" * 23, "-1", " 1", "1e3"])
def test_a_return_address_that_is_not_a_plain_id_is_ignored(client, task, annotator, value):
    client.force_login(annotator)
    first = client.post(next_url(task))["Location"]
    page = client.get(first, {"from": value})
    assert page.status_code == 200
    assert 'name="return_to"' not in page.content.decode()
