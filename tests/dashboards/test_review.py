"""The lead's pair page reads as the annotator saw it and walks the disagreement queue."""

import re

import pytest
from django.urls import reverse

from annotation.models import Adjudication, Rating
from dashboards.selectors.disagreements import disagreements, queue_neighbours
from projects.scale import scale_labels

pytestmark = pytest.mark.django_db


def _page(client, project, pair_id, query="") -> str:
    url = reverse("dash-pair", args=[project.slug, pair_id]) + query
    answer = client.get(url)
    assert answer.status_code == 200
    return answer.content.decode()


def test_each_rating_shows_what_was_pressed_and_which_side_was_right(client, rated):
    project, lead = rated
    client.force_login(lead)
    labels = dict(scale_labels(project.scale_points))
    for rating in Rating.objects.select_related("assignment", "annotator")[:6]:
        page = _page(client, project, rating.pair_id)
        swapped = rating.assignment.swapped
        # the form value is what the annotator pressed: canonical flipped unless B was left
        pressed = rating.overall if swapped else project.scale_points + 1 - rating.overall
        right = "A" if swapped else "B"
        expected = f"pressed {pressed} = {labels[pressed]}, "
        assert expected in page, (rating.annotator.username, rating.overall, swapped)
        assert f"Right was {right}" in page


def test_aspects_are_named_by_their_labels(client, rated, tasks_in_process):
    project, lead = rated
    task = project.tasks.get()
    aspect = task.aspects[0]
    rating = Rating.objects.filter(pair__task=task).first()
    rating.aspect_scores.create(aspect=aspect["key"], scale=rating.scale, score=2)
    client.force_login(lead)
    assert f"{aspect['label']}: " in _page(client, project, rating.pair_id)


def test_no_decision_is_chosen_in_advance(client, rated):
    project, lead = rated
    client.force_login(lead)
    pair = project.pairs.order_by("id").first()
    page = _page(client, project, pair.pk)
    select = re.search(r'<select name="decision" required>(.*?)</select>', page, re.S).group(1)
    assert '<option value="" selected>' in select
    assert select.count("selected") == 1
    url = reverse("dash-pair-decide", args=[project.slug, pair.pk])
    client.post(url, {"decision": "", "note": "forgot to choose"})
    assert not Adjudication.objects.exists()


def test_next_and_previous_follow_the_queue_with_its_filters(client, rated):
    project, lead = rated
    client.force_login(lead)
    queue = [p.pk for p in disagreements(project, reason="span")["pairs"]]
    assert len(queue) >= 2
    first, second = queue[0], queue[1]
    assert queue_neighbours(project, first, reason="span") == {
        "previous": None,
        "next": second,
        "position": 1,
        "of": len(queue),
    }
    page = _page(client, project, second, "?reason=span")
    assert f'href="/projects/{project.slug}/pairs/{first}/?reason=span"' in page
    assert f"2 of {len(queue)} in the" in page
    outside = project.pairs.exclude(pk__in=queue).order_by("id").first()
    assert queue_neighbours(project, outside.pk, reason="span")["position"] is None


def test_the_neighbours_are_those_of_the_queue_read_in_full_for_every_pair_and_filter(rated):
    """queue_neighbours numbers the queue in the database; reading the whole queue in its
    order gives the same previous, next, place and count, for every pair of the project
    (in the queue or not), every reason and every state, with one pair decided."""
    from content.models import Pair
    from dashboards.selectors.disagreements import REASONS, STATES, _queue_rows

    project, _lead = rated
    decided = disagreements(project)["pairs"][1]
    Pair.objects.filter(pk=decided.pk).update(decided_by=Pair.DecidedBy.ADJUDICATION)
    for reason in ["", *REASONS]:
        for state in STATES:
            rows = _queue_rows(project, "", reason, state)
            ids = [pk for pk, chosen in rows if chosen]
            for pair in project.pairs.all():
                order = [pk for pk, _chosen in rows]
                if pair.pk in ids:
                    at = ids.index(pair.pk)
                    expected = {
                        "previous": ids[at - 1] if at else None,
                        "next": ids[at + 1] if at + 1 < len(ids) else None,
                        "position": at + 1,
                        "of": len(ids),
                    }
                else:
                    at = order.index(pair.pk) if pair.pk in order else None
                    before = [pk for pk in ids if at is not None and order.index(pk) < at]
                    after = [pk for pk in ids if at is None or order.index(pk) > at]
                    expected = {
                        "previous": before[-1] if before else None,
                        "next": after[0] if after else None,
                        "position": None,
                        "of": len(ids),
                    }
                found = queue_neighbours(project, pair.pk, reason=reason, state=state)
                assert found == expected, (reason, state, pair.pk)


def test_the_queue_is_the_leads_own(client, rated, tmp_path):
    from tests.factories import member, queued_pairs

    project, _lead = rated
    other = queued_pairs(tmp_path, project_slug="other", count=1)
    stranger = member("stranger", other.project, role="lead")
    client.force_login(stranger)
    pair = project.pairs.first()
    assert client.get(reverse("dash-pair", args=[project.slug, pair.pk])).status_code == 404
    # the stranger's own project does not reveal this pair either
    assert client.get(reverse("dash-pair", args=["other", pair.pk])).status_code == 404


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_n_and_p_walk_the_queue_in_the_browser(rated, live_server, browser_page):
    project, lead = rated
    lead.set_password("pw-review-lead-1")
    lead.save()
    page = browser_page
    page.goto(live_server.url + reverse("login"))
    page.fill("input[name=username]", lead.username)
    page.fill("input[name=password]", "pw-review-lead-1")
    page.keyboard.press("Enter")
    page.wait_for_url(live_server.url + "/")
    queue = [p.pk for p in disagreements(project)["pairs"]]
    page.goto(live_server.url + reverse("dash-pair", args=[project.slug, queue[0]]))
    tops = page.eval_on_selector_all(
        ".responses > .card, .grid2 > .card",
        "cards => cards.map(c => c.getBoundingClientRect().top)",
    )
    assert len(tops) == 4 and tops[0] == tops[1] and tops[2] == tops[3]  # side by side, level
    page.keyboard.press("n")
    page.wait_for_url(f"**/pairs/{queue[1]}/")
    page.keyboard.press("p")
    page.wait_for_url(f"**/pairs/{queue[0]}/")
    page.fill("textarea[name=note]", "typing n here stays")  # keys in a field are text
    page.keyboard.press("n")
    assert page.url.endswith(f"/pairs/{queue[0]}/")


@pytest.mark.parametrize("page", ["1" * 23, "99", "²", "-2", "abc", ""])
def test_any_page_number_shows_a_page_of_the_queue(client, rated, page):
    project, lead = rated
    client.force_login(lead)
    answer = client.get(reverse("dash-disagreements", args=[project.slug]), {"page": page})
    assert answer.status_code == 200
    assert answer.context["page"] in (1, answer.context["pages"])
