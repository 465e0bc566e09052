"""Bulk actions of the pair browser: each follows its single-pair service's rules, the
confirmation says how many pairs change, and ids of another project's pairs change nothing."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Adjudication, AnnotatorRequest, GoldAnswer
from annotation.services.adjudication import pair_adjudicate
from annotation.services.pair_bulk import pair_bulk_apply, pair_bulk_preview
from content.models import Pair
from core.errors import Invalid

pytestmark = pytest.mark.django_db


def pairs(project, **lookup) -> list[Pair]:
    return list(Pair.objects.filter(project=project, **lookup).order_by("pk"))


def ids(rows) -> list[int]:
    return [pair.pk for pair in rows]


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_queue_sends_candidates_to_annotation_and_leaves_the_rest(browsed):
    project, lead = browsed
    everything = ids(pairs(project))
    preview = pair_bulk_preview(project=project, action="queue", pair_ids=everything)
    candidates = ids(pairs(project, status="candidate"))
    assert preview.changes == candidates
    assert sum(preview.left.values()) == len(everything) - len(candidates)
    result = pair_bulk_apply(project=project, lead=lead, action="queue", pair_ids=everything)
    assert (result.changed, result.left) == (2, 10)
    assert Pair.objects.filter(pk__in=candidates, status="queued").count() == 2


def test_one_more_rating_goes_through_the_request_service(browsed):
    project, lead = browsed
    complete = pairs(project, task__slug="t2i")
    adjudicated = complete[0]
    pair_adjudicate(adjudicated.pk, lead, "keep_a", "clear")
    result = pair_bulk_apply(
        project=project, lead=lead, action="annotator", pair_ids=ids(complete), note="close call"
    )
    assert (result.changed, result.left) == (7, 1)  # the lead's decision stands
    asked = AnnotatorRequest.objects.filter(pair__in=complete[1:], note="close call")
    assert asked.count() == 7
    for pair in pairs(project, pk__in=ids(complete[1:])):
        assert (pair.extra_annotators, pair.status) == (1, "in_progress")


def test_drop_records_the_leads_decision_and_leaves_gold_checks(browsed):
    project, lead = browsed
    complete = pairs(project, task__slug="t2i")
    already = ids(pairs(project, status="dropped"))
    result = pair_bulk_apply(
        project=project, lead=lead, action="drop", pair_ids=ids(complete), note="off-topic"
    )
    assert result.changed == len(complete) - len(already)
    assert Pair.objects.filter(pk__in=ids(complete)).exclude(status="dropped").count() == 0
    decisions = Adjudication.objects.filter(pair__in=complete, decision="drop", lead=lead)
    assert decisions.count() == result.changed


def test_gold_takes_the_imported_label_of_unrated_pairs_only(browsed):
    project, lead = browsed
    everything = ids(pairs(project))
    preview = pair_bulk_preview(project=project, action="gold", pair_ids=everything)
    labelled = ids(pairs(project, reference_label="A", rating_count=0))
    assert preview.changes == labelled
    assert preview.left["rated, or past annotation"] == 8
    assert preview.left["no imported label A or B for the expected side"] == 2
    result = pair_bulk_apply(project=project, lead=lead, action="gold", pair_ids=everything)
    assert result.changed == 2
    assert set(GoldAnswer.objects.values_list("pair_id", "side")) == {(pk, "A") for pk in labelled}


def test_a_note_is_needed_to_drop_or_ask_for_a_rating(browsed):
    project, lead = browsed
    for action in ("drop", "annotator"):
        with pytest.raises(Invalid):
            pair_bulk_apply(project=project, lead=lead, action=action, pair_ids=[1], note=" ")
    with pytest.raises(Invalid):
        pair_bulk_apply(project=project, lead=lead, action="delete", pair_ids=[1])


def test_another_projects_pair_ids_change_nothing(browsed, other_project):
    project, lead = browsed
    other, other_lead = other_project
    theirs = ids(pairs(other))
    before = list(Pair.objects.filter(pk__in=theirs).values_list("pk", "status", "label"))
    # The service, with the lead's own project and the other project's ids ...
    preview = pair_bulk_preview(project=project, action="drop", pair_ids=theirs)
    assert preview.changes == [] and preview.left == {"not in this project": 3}
    pair_bulk_apply(project=project, lead=lead, action="drop", pair_ids=theirs, note="x")
    # ... and the page, posting them to the other project's URL (404) or its own.
    client = signed_in(lead)
    post = {"action": "drop", "pair": theirs, "confirm": "1", "note": "x"}
    assert client.post(reverse("dash-pairs-bulk", args=[other.slug]), post).status_code == 404
    response = client.post(reverse("dash-pairs-bulk", args=[project.slug]), post)
    assert response.status_code == 302
    after = list(Pair.objects.filter(pk__in=theirs).values_list("pk", "status", "label"))
    assert after == before
    assert not Adjudication.objects.filter(pair__in=theirs).exists()


def test_the_confirmation_says_how_many_pairs_change_before_anything_does(browsed):
    project, lead = browsed
    client = signed_in(lead)
    chosen = ids(pairs(project, task__slug="edit"))
    response = client.post(
        reverse("dash-pairs-bulk", args=[project.slug]),
        {"action": "queue", "scope": "selected", "pair": chosen, "filter": "task=edit"},
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "2 pairs will change" in body and "of the 4 selected" in body
    assert Pair.objects.filter(pk__in=chosen, status="candidate").count() == 2  # not yet
    confirm = {"action": "queue", "confirm": "1", "pair": ",".join(map(str, chosen)),
               "filter": "task=edit"}  # fmt: skip
    response = client.post(reverse("dash-pairs-bulk", args=[project.slug]), confirm)
    assert response.status_code == 302
    assert response["Location"].endswith("/pairs/?task=edit")
    assert Pair.objects.filter(pk__in=chosen, status="queued").count() == 4
    page = client.get(response["Location"]).content.decode()
    assert "Queue for annotation: 2 pairs changed; 2 left as they were." in page


def test_all_matching_the_filter_acts_on_the_filtered_pairs(browsed):
    project, lead = browsed
    client = signed_in(lead)
    form = {"action": "queue", "scope": "all", "filter": "status=candidate"}
    body = client.post(reverse("dash-pairs-bulk", args=[project.slug]), form).content.decode()
    assert "2 pairs will change" in body and "of the 2 matching the filter" in body
    bulk = reverse("dash-pairs-bulk", args=[project.slug])
    response = client.post(bulk, {**form, "confirm": "1"})
    assert response.status_code == 302
    assert not Pair.objects.filter(project=project, status="candidate").exists()


def test_bulk_actions_are_posts_with_a_csrf_token_by_leads_only(browsed):
    project, lead = browsed
    bulk = reverse("dash-pairs-bulk", args=[project.slug])
    assert signed_in(lead).get(bulk).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(lead)
    assert strict.post(bulk, {"action": "queue", "scope": "all"}).status_code == 403
    annotator = project.memberships.get(user__username="ann1").user
    form = {"action": "queue", "scope": "all", "confirm": "1"}
    assert signed_in(annotator).post(bulk, form).status_code == 404
    assert Pair.objects.filter(project=project, status="candidate").count() == 2


def test_a_bad_selection_changes_nothing_and_says_why_never_a_500(browsed):
    project, lead = browsed
    bulk = reverse("dash-pairs-bulk", args=[project.slug])
    client = signed_in(lead)
    before = list(Pair.objects.filter(project=project).values_list("pk", "status"))
    cases = [
        ({"action": "queue", "pair": ["1x"]}, "A selected pair id is not a whole number."),
        ({"action": "queue", "pair": ["9" * 40]}, "A selected pair id is not a whole number."),
        ({"action": "queue", "filter": "task=edit"}, "Select at least one pair."),
        ({"action": "melt", "pair": ["1"]}, "Choose an action."),
        ({"action": "queue", "scope": "all", "filter": "ratings_min=abc"}, "filter the pairs"),
        ({"action": "drop", "pair": ["1"], "confirm": "1"}, "Write a note saying why."),
    ]
    for form, message in cases:
        response = client.post(bulk, form, follow=True)
        # Back to the browser (itself a 400 page when the filter posted back is bad).
        assert response.status_code == (400 if "abc" in form.get("filter", "") else 200), form
        assert message in response.content.decode(), form
    # The filter goes back into the URL re-encoded, never as it was posted.
    response = client.post(bulk, {"action": "queue", "filter": "task=edit\r\nX: y&evil=1"})
    assert response["Location"].endswith("/pairs/?task=edit%0D%0AX%3A+y")
    assert list(Pair.objects.filter(project=project).values_list("pk", "status")) == before
