"""The conversation through the pages: the annotate page's questions menu, the pair page's
questions and notes, the overview's open questions, and every way round the scope (another
project's lead, an annotator who has not rated, an annotator of another pair, notes)."""

import re

import pytest
from django.urls import reverse

from annotation.models import PairMessage, PairThread
from annotation.services.pair_threads import pair_note_add, question_answer, question_ask
from annotation.services.ratings import RatingInput, rating_submit

pytestmark = pytest.mark.django_db

QUESTION = "Is the left image cropped on purpose?"
ANSWER = "Yes: the crop is part of the prompt."
NOTE = "Internal: this annotator reads Left as A, check their ratings"


def _annotate(client, user, assignment) -> str:
    client.force_login(user)
    response = client.get(reverse("annotate", args=[assignment.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _pair_page(client, user, scene):
    client.force_login(user)
    return client.get(reverse("dash-pair", args=[scene.project.slug, scene.pair.pk]))


def _talk(scene):
    """The asker asks, the lead answers and leaves a note."""
    asked = question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=QUESTION)
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body=ANSWER)
    pair_note_add(pair_id=scene.pair.pk, lead=scene.lead, body=NOTE)
    return asked.thread


def test_the_annotate_page_offers_a_question_form_and_htmx_gets_the_menu_back(client, scene):
    page = _annotate(client, scene.asker, scene.asked_on)
    assert "Ask a question" in page and 'name="body"' in page
    url = reverse("question-ask", args=[scene.asked_on.pk])
    response = client.post(url, {"body": QUESTION}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    menu = response.content.decode()
    assert menu.lstrip().startswith("<details") and 'id="pair-thread"' in menu
    assert QUESTION in menu and "Waiting for an answer" in menu and " open>" in menu
    assert "Your question went to the leads." in menu
    assert response["Vary"] == "HX-Request" or "HX-Request" in response["Vary"]


def test_without_javascript_the_question_posts_and_redirects_to_the_pair(client, scene):
    client.force_login(scene.asker)
    url = reverse("question-ask", args=[scene.asked_on.pk])
    response = client.post(url, {"body": QUESTION})
    assert response.status_code == 302
    assert response["Location"].endswith(
        reverse("annotate", args=[scene.asked_on.pk]) + "#pair-thread"
    )
    page = client.get(response["Location"]).content.decode()
    assert "Your question went to the leads." in page and QUESTION in page


def test_an_empty_question_is_shown_again_in_place_with_its_error(client, scene):
    client.force_login(scene.asker)
    url = reverse("question-ask", args=[scene.asked_on.pk])
    response = client.post(url, {"body": "  "}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert (
        'role="alert"' in response.content.decode()
        and "Write your message" in response.content.decode()
    )
    assert not PairThread.objects.exists()


def test_a_question_is_escaped_everywhere(client, scene):
    attack = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    asked = question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=attack)
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body=attack)
    question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=attack)  # open again
    pages = [
        _annotate(client, scene.asker, scene.asked_on),
        _pair_page(client, scene.lead, scene).content.decode(),
    ]
    pages.append(client.get(reverse("dash-overview", args=[scene.project.slug])).content.decode())
    for page in pages:
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_lead_sees_the_thread_with_names_sides_and_notes_on_the_pair_page(client, scene):
    _talk(scene)
    page = _pair_page(client, scene.lead, scene).content.decode()
    assert QUESTION in page and ANSWER in page and NOTE in page
    assert "asker" in page and "their Left was response A" in page
    assert 'id="questions"' in page


def test_the_lead_answers_and_notes_from_the_pair_page(client, scene):
    asked = question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=QUESTION)
    client.force_login(scene.lead)
    answer_url = reverse("thread-answer", args=[scene.project.slug, scene.pair.pk, asked.thread_id])
    response = client.post(answer_url, {"body": ANSWER})
    assert response.status_code == 302 and response["Location"].endswith("#questions")
    note_url = reverse("pair-note", args=[scene.project.slug, scene.pair.pk])
    assert client.post(note_url, {"body": NOTE}).status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Answer sent" in page and "Note saved" in page
    assert PairThread.objects.get().status == PairThread.Status.ANSWERED
    assert list(PairMessage.objects.values_list("kind", "body")) == [
        ("question", QUESTION),
        ("answer", ANSWER),
        ("note", NOTE),
    ]
    response = client.post(note_url, {"body": ""}, follow=True)
    assert "Note not saved: Write your message first." in response.content.decode()


def test_the_asker_sees_the_answer_but_never_the_note(client, scene):
    _talk(scene)
    page = _annotate(client, scene.asker, scene.asked_on)
    assert QUESTION in page and ANSWER in page and "A lead" in page and "You" in page
    assert NOTE not in page and "<strong>lead</strong>" not in page  # no lead's username either
    menu = page[page.index('id="pair-thread"') :]
    summary = re.search(r"<summary>(.*?)</summary>", menu, re.DOTALL).group(1)
    assert re.sub(r"<[^>]+>", "", summary).startswith("Questions (1) · answered")


def test_another_annotator_sees_the_thread_only_once_they_have_rated(client, scene):
    _talk(scene)
    page = _annotate(client, scene.other, scene.other_on)
    assert QUESTION not in page and ANSWER not in page and NOTE not in page
    assert "Ask a question" in page
    rating_submit(
        scene.other_on.pk, scene.other, RatingInput(overall="2", aspects={}, rationale="")
    )
    page = _annotate(client, scene.other, scene.other_on)
    assert QUESTION in page and ANSWER in page and NOTE not in page
    assert "An annotator" in page and "asker" not in page
    assert "their Left is your Right" in page  # they saw the sides the other way round


def test_an_annotator_cannot_post_on_a_pair_they_do_not_hold(client, scene):
    client.force_login(scene.stranger)  # annotates another project
    url = reverse("question-ask", args=[scene.asked_on.pk])
    assert client.post(url, {"body": QUESTION}).status_code == 404
    assert client.post(url, {"body": QUESTION}, HTTP_HX_REQUEST="true").status_code == 404
    client.force_login(scene.other)  # same pair, someone else's assignment
    assert client.post(url, {"body": QUESTION}).status_code == 404
    missing = reverse("question-ask", args=[999_999])
    assert client.post(missing, {"body": QUESTION}).status_code == 404
    assert not PairThread.objects.exists()


def test_a_lead_of_another_project_gets_404_everywhere(client, scene):
    thread = _talk(scene)
    client.force_login(scene.stranger_lead)
    slug, pair_id = scene.project.slug, scene.pair.pk
    urls = [
        reverse("thread-answer", args=[slug, pair_id, thread.pk]),
        reverse("pair-note", args=[slug, pair_id]),
        reverse("question-ask", args=[scene.asked_on.pk]),
    ]
    for url in urls:
        assert client.post(url, {"body": "mine now"}).status_code == 404, url
    # Their own project's slug with this project's pair or thread: as missing.
    own = scene.stranger_on.pair.project.slug
    for url in [
        reverse("thread-answer", args=[own, pair_id, thread.pk]),
        reverse("thread-answer", args=[own, scene.stranger_on.pair_id, thread.pk]),
        reverse("pair-note", args=[own, pair_id]),
    ]:
        assert client.post(url, {"body": "mine now"}).status_code == 404, url
    assert PairMessage.objects.count() == 3
    own_overview = client.get(reverse("dash-overview", args=[own])).content.decode()
    assert QUESTION not in own_overview


def test_annotators_cannot_answer_or_note(client, scene):
    thread = _talk(scene)
    client.force_login(scene.asker)
    slug, pair_id = scene.project.slug, scene.pair.pk
    for url in [
        reverse("thread-answer", args=[slug, pair_id, thread.pk]),
        reverse("pair-note", args=[slug, pair_id]),
    ]:
        assert client.post(url, {"body": "I answer myself"}).status_code == 403
    assert PairMessage.objects.count() == 3


def test_the_overview_lists_open_questions_for_its_leads(client, scene):
    asked = question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=QUESTION)
    client.force_login(scene.lead)
    page = client.get(reverse("dash-overview", args=[scene.project.slug])).content.decode()
    assert 'Open questions <span class="muted">(1)</span>' in page and QUESTION in page
    link = reverse("dash-pair", args=[scene.project.slug, scene.pair.pk]) + "#questions"
    assert link in page
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body=ANSWER)
    page = client.get(reverse("dash-overview", args=[scene.project.slug])).content.decode()
    assert 'Open questions <span class="muted">(0)</span>' in page and QUESTION not in page


def test_the_questions_menu_costs_one_query_on_the_annotate_page(
    client, scene, django_assert_num_queries
):
    """The annotate page's query budget (tests/annotate/test_query_budgets.py) counts it."""
    from annotation.selectors.pair_threads import annotator_threads

    _talk(scene)
    with django_assert_num_queries(1):
        annotator_threads(scene.asker, scene.asked_on)
