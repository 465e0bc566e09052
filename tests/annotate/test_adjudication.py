"""The lead's adjudication (docs/architecture.md §5.6), through the services: decisions, one more
annotator, and re-applying changed filter settings."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from annotation.models import Adjudication, AnnotatorRequest, Assignment, Flag, Rating
from annotation.services.adjudication import (
    AdjudicationRefused,
    FilterInvalid,
    pair_adjudicate,
    pair_request_annotator,
    project_filter_update,
)
from annotation.services.assignments import AssignmentClosed, assignment_claim, assignment_flag
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from projects.scale import to_form
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def rate(user, task, canonical, pair=None, **kwargs):
    """Claim the user's next pair (asserted to be `pair` if given) and rate it so that the
    stored, canonical score is `canonical` (above the centre: A is better)."""
    assignment = assignment_claim(user, task, **kwargs)
    assert assignment is not None, f"{user} got no pair"
    if pair is not None:
        assert assignment.pair_id == pair.pk
    form = to_form(canonical, task.project.scale_points, assignment.swapped)
    rating_submit(assignment.pk, user, RatingInput(overall=form), **kwargs)
    return assignment


def rate_pair(pair, users, scores):
    for user, score in zip(users, scores, strict=True):
        rate(user, pair.task, score, pair)
    pair.refresh_from_db()
    return pair


def fresh(pair):
    return Pair.objects.get(pk=pair.pk)


@pytest.fixture
def one(tmp_path):
    """A task with one queued pair (K = 7, N = 3, max span 4, band 4 ± 0.5)."""
    return queued_pairs(tmp_path, count=1)


@pytest.fixture
def raters(one):
    return [member(f"rater{i}", one.project) for i in range(1, 6)]


@pytest.fixture
def project(one):
    return one.project


def only_pair(task):
    return Pair.objects.get(task=task)


# ---------------------------------------------------------------- pair_adjudicate


def test_an_adjudication_overrides_the_consensus(one, raters, lead):
    pair = rate_pair(only_pair(one), raters[:3], [6, 6, 7])
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "A", "consensus")
    adjudication = pair_adjudicate(pair.pk, lead, "keep_b", "  A hides a watermark  ")
    assert (adjudication.lead, adjudication.decision, adjudication.note) == (
        lead,
        "keep_b",
        "A hides a watermark",
    )
    assert abs(adjudication.created_at - timezone.now()) < timedelta(seconds=5)
    pair = fresh(pair)
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "B", "adjudication")
    # The ratings' figures stay what they are.
    assert (pair.rating_count, pair.consensus_span) == (3, 1)
    assert pair.consensus_mean == pytest.approx(19 / 3)


def test_a_later_adjudication_overrides_an_earlier_one_and_history_is_kept(one, raters, lead):
    pair = rate_pair(only_pair(one), raters[:3], [6, 6, 7])
    other_lead = member("lead2", one.project, role="lead")
    first = pair_adjudicate(pair.pk, lead, "keep_b", "A hides a watermark")
    second = pair_adjudicate(pair.pk, other_lead, "drop", "both responses miss the prompt")
    pair = fresh(pair)
    assert (pair.status, pair.label, pair.decided_by) == ("dropped", "", "adjudication")
    history = list(Adjudication.objects.filter(pair=pair))  # latest first
    assert [a.pk for a in history] == [second.pk, first.pk]
    kept = history[1]
    assert (kept.lead, kept.decision, kept.note) == (lead, "keep_b", "A hides a watermark")
    third = pair_adjudicate(pair.pk, lead, "keep_a", "re-checked: A is fine")
    assert fresh(pair).label == "A"
    assert Adjudication.objects.filter(pair=pair).count() == 3
    assert Adjudication.objects.filter(pair=pair).first().pk == third.pk


def test_submitting_the_latest_decision_again_records_nothing_new(one, lead):
    pair = only_pair(one)
    first = pair_adjudicate(pair.pk, lead, "drop", "broken image")
    assert pair_adjudicate(pair.pk, lead, "drop", "broken image").pk == first.pk
    assert Adjudication.objects.filter(pair=pair).count() == 1
    # A different note is a new decision, recorded.
    pair_adjudicate(pair.pk, lead, "drop", "broken image, checked twice")
    assert Adjudication.objects.filter(pair=pair).count() == 2


def test_a_drop_takes_the_pair_out_of_annotation_at_once(one, raters, lead):
    pair = only_pair(one)
    rate(raters[0], one, 6, pair)
    leased = assignment_claim(raters[1], one)
    assert fresh(pair).status == "in_progress"
    pair_adjudicate(pair.pk, lead, "drop", "the prompt is unsafe")
    pair = fresh(pair)
    assert (pair.status, pair.label, pair.decided_by, pair.rating_count) == (
        "dropped",
        "",
        "adjudication",
        1,
    )
    assert assignment_claim(raters[2], one) is None
    with pytest.raises(AssignmentClosed):
        rating_submit(leased.pk, raters[1], RatingInput(overall=3))
    assert Rating.objects.filter(pair=pair).count() == 1
    # A later rating cannot undo the adjudication either.
    assert fresh(pair).status == "dropped"


def test_keep_decides_a_pair_without_ratings(one, lead):
    pair = only_pair(one)
    pair_adjudicate(pair.pk, lead, "keep_a", "obvious: B is blank")
    pair = fresh(pair)
    assert (pair.status, pair.label, pair.decided_by, pair.rating_count) == (
        "kept",
        "A",
        "adjudication",
        0,
    )


@pytest.mark.parametrize(
    ("decision", "note", "message"),
    [
        ("keep", "A is better", "keep A, keep B or drop"),
        ("", "A is better", "keep A, keep B or drop"),
        ("keep_a", "", "note"),
        ("drop", "   \n ", "note"),
        ("drop", "x" * 10_001, "under"),
    ],
)
def test_an_adjudication_needs_a_decision_and_a_note(one, lead, decision, note, message):
    pair = only_pair(one)
    with pytest.raises(AdjudicationRefused, match=message):
        pair_adjudicate(pair.pk, lead, decision, note)
    assert not Adjudication.objects.exists()
    assert fresh(pair).status == "queued"


def test_an_adjudication_resolves_the_open_flags(one, raters, lead):
    pair = only_pair(one)
    flags = [
        assignment_flag(assignment_claim(user, one).pk, user, "broken", "black image")
        for user in raters[:2]
    ]
    earlier = timezone.now() - timedelta(days=1)
    other_lead = member("lead2", one.project, role="lead")
    Flag.objects.filter(pk=flags[0].pk).update(resolved_at=earlier, resolved_by=other_lead)
    pair_adjudicate(pair.pk, lead, "drop", "the right image is black")
    old, new = (Flag.objects.get(pk=flag.pk) for flag in flags)
    assert (old.resolved_at, old.resolved_by) == (earlier, other_lead)  # already resolved
    assert new.resolved_by == lead
    assert abs(new.resolved_at - timezone.now()) < timedelta(seconds=5)


def test_only_the_projects_leads_adjudicate(one, raters, tmp_path):
    pair = only_pair(one)
    queued_pairs(tmp_path, project_slug="other", task_slug="t2i", count=1)
    other_lead = member("other-lead", Pair.objects.get(project__slug="other").project, "lead")
    for user in (raters[0], other_lead):
        with pytest.raises(PermissionDenied):
            pair_adjudicate(pair.pk, user, "drop", "not mine to decide")
        with pytest.raises(PermissionDenied):
            pair_request_annotator(pair.pk, user, "not mine to ask")
    assert not Adjudication.objects.exists() and not AnnotatorRequest.objects.exists()
    admin = User.objects.create_superuser("root", password="pw-root-1")
    pair_adjudicate(pair.pk, admin, "drop", "superusers lead every project")
    assert fresh(pair).status == "dropped"


# ---------------------------------------------------------------- pair_request_annotator


def test_one_more_annotator_gets_the_pair_and_the_extra_rating_redecides_it(one, raters, lead):
    first_three, fourth, fifth = raters[:3], raters[3], raters[4]
    pair = rate_pair(only_pair(one), first_three, [6, 6, 7])
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "A", "consensus")
    assert assignment_claim(fourth, one) is None  # N ratings: nothing left to claim

    returned = pair_request_annotator(pair.pk, lead, " A's text looks off-topic ")
    assert returned.pk == pair.pk
    pair = fresh(pair)
    assert (pair.extra_annotators, pair.status, pair.label, pair.decided_by) == (
        1,
        "in_progress",
        "",
        "",
    )
    assert pair.rating_count == 3
    request = AnnotatorRequest.objects.get(pair=pair)
    assert (request.lead, request.note) == (lead, "A's text looks off-topic")
    assert abs(request.created_at - timezone.now()) < timedelta(seconds=5)

    # Nobody gets it twice: the three who rated it are not offered it again.
    assert [assignment_claim(user, one) for user in first_three] == [None, None, None]
    rate(fourth, one, 1, pair)
    pair = fresh(pair)
    # Consensus over all four ratings: mean 5, span 6 > 4, dropped.
    assert (pair.rating_count, pair.consensus_span, pair.status, pair.decided_by) == (
        4,
        6,
        "dropped",
        "consensus",
    )
    assert pair.consensus_mean == pytest.approx(5)
    assert assignment_claim(fifth, one) is None


def test_the_extra_slot_is_taken_once(one, raters, lead):
    pair = rate_pair(only_pair(one), raters[:3], [6, 6, 7])
    pair_request_annotator(pair.pk, lead, "one more opinion")
    taken = assignment_claim(raters[3], one)
    assert taken is not None and taken.pair_id == pair.pk
    assert assignment_claim(raters[4], one) is None  # the lease holds the only extra slot
    assert assignment_claim(raters[3], one).pk == taken.pk  # resumed, not a second slot


def test_an_open_pair_asked_for_one_more_needs_n_plus_one_ratings(one, raters, lead):
    pair = only_pair(one)
    pair_request_annotator(pair.pk, lead, "a hard one: four opinions")
    assert fresh(pair).status == "queued"  # still open: nothing to reopen
    rate_pair(pair, raters[:3], [6, 6, 7])
    pair = fresh(pair)
    assert (pair.rating_count, pair.status, pair.decided_by) == (3, "in_progress", "")
    rate(raters[3], one, 6, pair)
    pair = fresh(pair)
    assert (pair.rating_count, pair.status, pair.label, pair.decided_by) == (
        4,
        "kept",
        "A",
        "consensus",
    )


def test_an_expired_lease_takes_the_extra_slot_when_it_is_free(one, raters, lead):
    late, *others = raters[:4]
    stale = assignment_claim(late, one)
    later = timezone.now() + timedelta(minutes=one.project.lease_minutes + 1)
    pair = only_pair(one)
    for user, score in zip(others, [6, 6, 7], strict=True):
        rate(user, one, score, pair, now=later)
    assert fresh(pair).status == "kept"
    pair_request_annotator(pair.pk, lead, "one more opinion")
    resumed = assignment_claim(late, one, now=later)
    assert resumed.pk == stale.pk
    form = to_form(6, one.project.scale_points, resumed.swapped)
    rating_submit(resumed.pk, late, RatingInput(overall=form), now=later)
    pair = fresh(pair)
    assert (pair.rating_count, pair.status) == (4, "kept")


def test_a_late_rating_fills_the_extra_slot_when_it_is_free(one, raters, lead):
    late, *others = raters[:4]
    stale = assignment_claim(late, one)
    later = timezone.now() + timedelta(minutes=one.project.lease_minutes + 1)
    pair = only_pair(one)
    for user, score in zip(others, [6, 6, 7], strict=True):
        rate(user, one, score, pair, now=later)
    pair_request_annotator(pair.pk, lead, "one more opinion")
    form = to_form(1, one.project.scale_points, stale.swapped)
    rating_submit(stale.pk, late, RatingInput(overall=form), now=later)  # no new claim
    pair = fresh(pair)
    assert (pair.rating_count, pair.consensus_span, pair.status) == (4, 6, "dropped")


def test_asking_again_with_the_same_note_adds_no_second_annotator(one, raters, lead):
    pair = rate_pair(only_pair(one), raters[:3], [6, 6, 7])
    pair_request_annotator(pair.pk, lead, "one more opinion")
    pair_request_annotator(pair.pk, lead, "one more opinion")  # a repeated submit
    assert fresh(pair).extra_annotators == 1
    pair_request_annotator(pair.pk, lead, "and a fifth, to be sure")
    assert fresh(pair).extra_annotators == 2
    assert AnnotatorRequest.objects.filter(pair=pair).count() == 2
    assert assignment_claim(raters[3], one) is not None
    assert assignment_claim(raters[4], one) is not None


def test_an_adjudicated_pair_goes_to_no_more_annotators(one, raters, lead):
    pair = rate_pair(only_pair(one), raters[:3], [6, 6, 7])
    pair_adjudicate(pair.pk, lead, "keep_a", "clear enough")
    with pytest.raises(AdjudicationRefused, match="adjudicate it again"):
        pair_request_annotator(pair.pk, lead, "one more opinion")
    pair = fresh(pair)
    assert (pair.extra_annotators, pair.status) == (0, "kept")
    assert not AnnotatorRequest.objects.exists()
    assert assignment_claim(raters[3], one) is None


def test_asking_for_an_annotator_needs_a_note_and_a_pair_in_annotation(one, lead):
    pair = only_pair(one)
    with pytest.raises(AdjudicationRefused, match="note"):
        pair_request_annotator(pair.pk, lead, "  ")
    for status in ("easy", "candidate"):
        Pair.objects.filter(pk=pair.pk).update(status=status)
        with pytest.raises(AdjudicationRefused, match="not being annotated"):
            pair_request_annotator(pair.pk, lead, "one more opinion")
    # Labelled on import, never annotated: nothing to add one more annotator to.
    Pair.objects.filter(pk=pair.pk).update(
        status="kept", reference_label="A", label="A", decided_by="imported"
    )
    with pytest.raises(AdjudicationRefused, match="not being annotated"):
        pair_request_annotator(pair.pk, lead, "one more opinion")
    assert fresh(pair).extra_annotators == 0
    assert not AnnotatorRequest.objects.exists()


# ---------------------------------------------------------------- project_filter_update


@pytest.fixture
def campaign(tmp_path):
    """Seven pairs of one task, each named for the ratings it got, in the claim's order:
    wide      [7, 7, 3]  mean 5.67, span 4: kept (span ≤ 4); dropped once max span is 3
    clear     [6, 6, 6]  kept whatever the new settings
    near      [5, 4, 4]  mean 4.33, in 4 ± 0.5: dropped; kept once the half width is 0.2
    judged    [7, 7, 3]  adjudicated keep_b: keeps the lead's decision
    asked     [7, 7, 3]  one more annotator asked for: 3 of 4 ratings, undecided
    partial   [7, 3]     in progress
    imported  labelled B on import, no ratings"""
    task = queued_pairs(tmp_path, count=7)
    users = [member(f"u{i}", task.project) for i in range(3)]
    lead = member("lead", task.project, role="lead")
    imported = Pair.objects.filter(task=task).first()
    Pair.objects.filter(pk=imported.pk).update(
        status="kept", reference_label="B", label="B", decided_by="imported"
    )
    pairs = {}
    for name, scores in [
        ("wide", [7, 7, 3]),
        ("clear", [6, 6, 6]),
        ("near", [5, 4, 4]),
        ("judged", [7, 7, 3]),
        ("asked", [7, 7, 3]),
        ("partial", [7, 3]),
    ]:
        # Whichever pair the queue hands out next; the others then finish it (started first).
        pair = Pair.objects.get(pk=rate(users[0], task, scores[0]).pair_id)
        pairs[name] = rate_pair(pair, users[1 : len(scores)], scores[1:])
    pair_adjudicate(pairs["judged"].pk, lead, "keep_b", "A's image is a copy of the prompt's")
    pair_request_annotator(pairs["asked"].pk, lead, "one more opinion")
    pairs["imported"] = imported
    return task, {name: fresh(pair) for name, pair in pairs.items()}


def decisions(pairs):
    return {
        name: tuple(Pair.objects.values_list("status", "label", "decided_by").get(pk=pair.pk))
        for name, pair in pairs.items()
    }


def test_changed_filter_settings_are_saved_and_re_applied_to_the_right_pairs(campaign):
    task, pairs = campaign
    project = task.project
    before = decisions(pairs)
    assert before == {
        "wide": ("kept", "A", "consensus"),
        "clear": ("kept", "A", "consensus"),
        "near": ("dropped", "A", "consensus"),
        "judged": ("kept", "B", "adjudication"),
        "asked": ("in_progress", "", ""),
        "partial": ("in_progress", "", ""),
        "imported": ("kept", "B", "imported"),
    }
    stamps = dict(Pair.objects.filter(task=task).values_list("pk", "updated_at"))

    assert project_filter_update(project, max_span=3, ambiguous_half_width=0.2) == 2
    project.refresh_from_db()
    assert (project.max_span, project.ambiguous_half_width) == (3, 0.2)
    after = decisions(pairs)
    assert after["wide"] == ("dropped", "A", "consensus")
    assert after["near"] == ("kept", "A", "consensus")
    unchanged = ["clear", "judged", "asked", "partial", "imported"]
    assert {name: after[name] for name in unchanged} == {name: before[name] for name in unchanged}
    # Changed pairs get a new updated_at (dashboards cache on it); the others keep theirs.
    new_stamps = dict(Pair.objects.filter(task=task).values_list("pk", "updated_at"))
    assert {pk for pk in stamps if new_stamps[pk] != stamps[pk]} == {
        pairs["wide"].pk,
        pairs["near"].pk,
    }

    # Re-applying the same settings changes nothing; going back restores the first decisions.
    assert project_filter_update(project, max_span=3, ambiguous_half_width=0.2) == 0
    assert project_filter_update(project, max_span=4, ambiguous_half_width=0.5) == 2
    assert decisions(pairs) == before


def test_the_pair_with_one_more_annotator_is_decided_by_the_new_rules(campaign):
    task, pairs = campaign
    project_filter_update(task.project, max_span=3, ambiguous_half_width=0.5)
    extra = member("u-extra", task.project)
    rate(extra, task, 7, pairs["asked"])  # [7, 7, 3, 7]: span 4 > 3
    assert decisions({"asked": pairs["asked"]})["asked"] == ("dropped", "A", "consensus")


@pytest.mark.parametrize(
    ("max_span", "half_width", "fields"),
    [
        (-1, 0.5, {"max_span"}),
        (7, 0.5, {"max_span"}),  # K = 7: spans run 0..6
        (2.5, 0.5, {"max_span"}),
        ("two", 0.5, {"max_span"}),
        (None, 0.5, {"max_span"}),
        (True, 0.5, {"max_span"}),
        (4, -0.1, {"ambiguous_half_width"}),
        (4, 3.01, {"ambiguous_half_width"}),  # (K − 1) / 2 = 3
        (4, float("nan"), {"ambiguous_half_width"}),
        (4, float("inf"), {"ambiguous_half_width"}),
        (4, "", {"ambiguous_half_width"}),
        (9, -1, {"max_span", "ambiguous_half_width"}),
    ],
)
def test_filter_settings_out_of_range_are_refused_and_nothing_changes(
    campaign, max_span, half_width, fields
):
    task, pairs = campaign
    before = decisions(pairs)
    with pytest.raises(FilterInvalid) as refused:
        project_filter_update(task.project, max_span=max_span, ambiguous_half_width=half_width)
    assert set(refused.value.errors) == fields
    assert refused.value.status == 400  # an input error, with a message per field
    assert "from 0 to" in str(refused.value)
    task.project.refresh_from_db()
    assert (task.project.max_span, task.project.ambiguous_half_width) == (4, 0.5)
    assert decisions(pairs) == before


@pytest.mark.parametrize(("max_span", "half_width"), [(0, 0), (6, 3), ("3", "0.25"), (2.0, 1)])
def test_filter_settings_at_the_limits_are_accepted(one, max_span, half_width):
    project = one.project
    project_filter_update(project, max_span=max_span, ambiguous_half_width=half_width)
    project.refresh_from_db()
    assert (project.max_span, project.ambiguous_half_width) == (int(max_span), float(half_width))


def test_a_lower_n_decides_pairs_that_now_have_enough_ratings(campaign):
    task, pairs = campaign
    task.project.annotators_per_pair = 2
    task.project.save(update_fields=["annotators_per_pair"])
    # partial [7, 3]: mean 5, span 4, kept; asked needs 2 + 1 = 3 ratings and has them.
    assert project_filter_update(task.project, max_span=4, ambiguous_half_width=0.5) == 2
    after = decisions(pairs)
    assert after["partial"] == ("kept", "A", "consensus")
    assert after["asked"] == ("kept", "A", "consensus")
    assert Assignment.objects.filter(pair=pairs["partial"]).count() == 2
