"""The pair browser's selector, filter by filter, and its search (SQLite here; PostgreSQL's
full-text search where DATABASE_URL points at PostgreSQL, as in CI)."""

import pytest
from django.contrib.auth.models import User

from annotation.gold.services import GoldEntry, gold_set
from annotation.models import Rating
from annotation.services.adjudication import pair_adjudicate
from content.models import Pair
from dashboards.selectors.pair_browser import (
    browser_filters_parse,
    browser_form,
    browser_page,
    browser_pairs,
)
from judging.models import Judge, Verdict
from tests.factories import member

pytestmark = pytest.mark.django_db


def found(project, **params) -> list[str]:
    """External ids the browser lists for these query-string values."""
    form = browser_form(project, {k: str(v) for k, v in params.items()})
    filters = browser_filters_parse(project, form)
    assert form.errors == {}
    return [pair.external_id for pair in browser_pairs(project, filters)]


def errors(project, **params) -> dict:
    form = browser_form(project, {k: str(v) for k, v in params.items()})
    browser_filters_parse(project, form, str(params.get("page", "")))
    return form.errors


def ids_of(project, **lookup) -> list[str]:
    return list(
        Pair.objects.filter(project=project, **lookup)
        .order_by("pk")
        .values_list("external_id", flat=True)
    )


def test_without_a_filter_every_pair_of_the_project_is_listed_by_id(browsed, other_project):
    project, _ = browsed
    assert found(project) == ids_of(project)
    assert len(found(project)) == 12


def test_the_task_filter_takes_the_slug_or_the_id(browsed):
    project, _ = browsed
    edit = project.tasks.get(slug="edit")
    assert found(project, task="edit") == ids_of(project, task=edit)
    assert found(project, task=edit.pk) == ids_of(project, task=edit)


def test_the_status_filter(browsed):
    project, _ = browsed
    assert found(project, status="candidate") == ids_of(project, status="candidate")
    assert len(found(project, status="candidate")) == 2


def test_the_number_of_ratings_between_a_minimum_and_a_maximum(browsed):
    project, _ = browsed
    assert found(project, ratings_min=3) == ids_of(project, task__slug="t2i")
    assert found(project, ratings_max=0) == ids_of(project, task__slug="edit")
    assert found(project, ratings_min=1, ratings_max=2) == []


def test_the_consensus_side_is_the_side_of_the_ratings_mean(browsed):
    project, _ = browsed
    center = project.center
    assert found(project, side="A") == ids_of(project, consensus_mean__gt=center)
    assert found(project, side="B") == ids_of(project, consensus_mean__lt=center)
    assert found(project, side="tie") == ids_of(project, consensus_mean=center)
    assert (
        len(found(project, side="A"))
        + len(found(project, side="B"))
        + len(found(project, side="tie"))
        == 8
    )


def test_the_span_filter_keeps_pairs_at_or_above_it(browsed):
    project, _ = browsed
    assert found(project, span_min=3) == ids_of(project, consensus_span__gte=3)
    assert 0 < len(found(project, span_min=3)) < 8


def test_flagged_lists_pairs_with_an_open_flag(browsed):
    project, _ = browsed
    flagged = found(project, flagged="yes")
    assert flagged == ids_of(project, flags__resolved_at__isnull=True, flags__isnull=False)
    assert len(flagged) == 1
    assert set(found(project, flagged="no")) == set(ids_of(project)) - set(flagged)


def test_gold_lists_gold_checks(browsed):
    project, lead = browsed
    pair = Pair.objects.filter(project=project, status="candidate").first()
    gold_set(pair.task, [GoldEntry(pair.external_id, "A")], by=lead)
    assert found(project, gold="yes") == [pair.external_id]
    assert pair.external_id not in found(project, gold="no")


def test_adjudicated_lists_pairs_a_lead_decided(browsed):
    project, lead = browsed
    pair = Pair.objects.filter(project=project, task__slug="t2i").last()
    pair_adjudicate(pair.pk, lead, "keep_b", "B is plainly better")
    assert found(project, adjudicated="yes") == [pair.external_id]
    assert len(found(project, adjudicated="no")) == 11


def test_the_annotator_filter_lists_the_pairs_they_rated(browsed):
    project, _ = browsed
    ann1 = User.objects.get(username="ann1")
    newcomer = member("newcomer", project)
    rated = ids_of(project, ratings__annotator=ann1)
    assert found(project, annotator=ann1.pk) == rated == ids_of(project, task__slug="t2i")
    assert found(project, annotator=newcomer.pk) == []


def answers(judge, pair, forward, reverse):
    """The judge's canonical answers on the pair in both orders: "with" the experts' label,
    "against" it (the other side), or as written (tie)."""
    other = {"A": "B", "B": "A"}[pair.label] if pair.label else "A"
    side = {"with": pair.label, "against": other}
    for order, choice in (("forward", forward), ("reverse", reverse)):
        Verdict.objects.create(judge=judge, pair=pair, order=order, choice=side.get(choice, choice))


def decided(project, count):
    return list(Pair.objects.filter(project=project).exclude(label="").order_by("pk")[:count])


def test_a_chosen_judge_disagrees_where_most_of_its_answers_name_the_other_side(browsed):
    project, _ = browsed
    judge = Judge.objects.create(name="contrarian", backend="random", project=project)
    first, second, third = decided(project, 3)
    answers(judge, first, "against", "against")  # against the experts in both orders
    answers(judge, second, "with", "against")  # one each way (position bias): not against
    answers(judge, third, "against", "tie")  # a tie names no side: its one side is against
    assert found(project, judge=judge.pk) == [first.external_id, third.external_id]


def test_undecided_pairs_have_no_experts_to_disagree_with(browsed):
    project, _ = browsed
    judge = Judge.objects.create(name="contrarian", backend="random", project=project)
    undecided = Pair.objects.filter(project=project, label="").first()
    answers(judge, undecided, "B", "B")
    assert undecided.status != Pair.Status.GOLD
    assert found(project, judge=judge.pk) == []


def test_any_judge_is_any_of_the_judges_the_project_uses(browsed, other_project):
    project, _ = browsed
    other, _ = other_project
    mine = Judge.objects.create(name="mine", backend="random", project=project)
    operators = Judge.objects.create(name="operator-wide", backend="random")
    theirs = Judge.objects.create(name="theirs", backend="random", project=other)
    pairs = decided(project, 3)
    answers(mine, pairs[0], "against", "against")
    answers(operators, pairs[1], "against", "against")
    answers(theirs, pairs[2], "against", "against")  # no judge of this project
    assert found(project, judge="any") == [p.external_id for p in pairs[:2]]
    assert "judge" in errors(project, judge=theirs.pk)


def test_search_finds_a_word_of_the_prompt(browsed):
    project, _ = browsed
    assert found(project, q="scene") == ids_of(project)
    assert found(project, q="number 3") == [
        external_id for external_id in ids_of(project) if "-3-" in external_id
    ]


def test_search_finds_response_text_source_and_external_id(browsed):
    project, _ = browsed
    assert len(found(project, q="says")) == 12
    assert len(found(project, q="unit")) == 12  # the source
    target = ids_of(project, task__slug="edit")[1]
    assert found(project, q=target) == [target]


def test_search_finds_nothing_for_an_absent_word(browsed):
    project, _ = browsed
    assert found(project, q="zebra") == []


def test_sorts_go_both_ways_with_the_id_breaking_ties(browsed):
    project, _ = browsed
    pairs = Pair.objects.filter(project=project)
    by_ratings = [p.external_id for p in pairs.order_by("-rating_count", "-id")]
    assert found(project, sort="ratings", order="desc") == by_ratings
    assert found(project, sort="id", order="desc") == ids_of(project)[::-1]
    spans = [p.consensus_span for p in browser_pairs(
        project, browser_filters_parse(project, browser_form(project, {"sort": "span"}))
    )]  # fmt: skip
    assert spans[:8] == sorted(spans[:8]) and spans[8:] == [None] * 4  # no ratings: last


def test_filters_combine(browsed):
    project, _ = browsed
    ann2 = User.objects.get(username="ann2")
    both = found(project, task="t2i", annotator=ann2.pk, span_min=2, q="scene")
    assert both == ids_of(project, task__slug="t2i", consensus_span__gte=2)


def test_a_page_holds_its_size_and_the_last_page_the_rest(browsed):
    project, _ = browsed
    form = browser_form(project, {"size": "25"})
    page = browser_page(project, browser_filters_parse(project, form, "9"))
    assert (page.page, page.pages, page.total, len(page.rows)) == (1, 1, 12, 12)


@pytest.mark.parametrize(
    "params, field",
    [
        ({"ratings_min": "abc"}, "ratings_min"),
        ({"ratings_min": "²"}, "ratings_min"),
        ({"ratings_min": "-1"}, "ratings_min"),
        ({"ratings_max": "9" * 30}, "ratings_max"),
        ({"ratings_min": "3", "ratings_max": "1"}, "ratings_max"),
        ({"span_min": "7"}, "span_min"),
        ({"task": "nope"}, "task"),
        ({"status": "lost"}, "status"),
        ({"side": "left"}, "side"),
        ({"flagged": "maybe"}, "flagged"),
        ({"annotator": "999999"}, "annotator"),
        ({"judge": "999999"}, "judge"),
        ({"sort": "password"}, "sort"),
        ({"order": "sideways"}, "order"),
        ({"size": "7"}, "size"),
        ({"page": "0"}, "page"),
        ({"page": "1e3"}, "page"),
    ],
)
def test_each_bad_value_is_named_on_its_field(browsed, params, field):
    project, _ = browsed
    assert field in errors(project, **params)


def test_an_annotator_outside_the_project_is_not_a_choice(browsed, other_project):
    project, _ = browsed
    _, other_lead = other_project
    assert "annotator" in errors(project, annotator=other_lead.pk)
    assert Rating.objects.filter(pair__project=project).exists()
