"""Gold checks: set by a lead, mixed into every annotator's queue at the task's
rate (the first within 10 pairs), never part of a consensus, measured per annotator, and
pausing an annotator who fails them until a lead re-admits them, losing nothing."""

from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.gold.qualification import qualification_admit
from annotation.gold.schedule import golds_due
from annotation.gold.selectors import task_hold_reason
from annotation.gold.services import (
    GoldEntry,
    annotator_readmit,
    gold_assignment_create,
    gold_entries_from_csv,
    gold_record,
    gold_set,
    gold_unset,
)
from annotation.models import AnnotatorPause, Assignment, Flag, GoldAnswer, Qualification, Rating
from annotation.selectors.progress import annotator_progress
from annotation.services.assignments import AssignmentClosed, assignment_claim, assignment_flag
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from core.errors import Invalid, Refused
from projects.models import Task
from projects.scale import to_canonical
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def make_gold(task, count, side="A"):
    pairs = list(Pair.objects.filter(task=task).order_by("id")[:count])
    gold_set(task, [GoldEntry(p.external_id, side) for p in pairs])
    return {p.pk for p in pairs}


def answer(user, assignment, side_right: bool):
    """Rate as an annotator who picks the pair's A side (or B when side_right is False),
    whatever side it was shown on."""
    canonical = 6 if side_right else 2  # 6: A better, 2: B better (K = 7)
    shown = to_canonical(canonical, 7, assignment.swapped)
    rating_submit(assignment.pk, user, RatingInput(overall=shown))


def work_through(user, task, picks_a=lambda pair_id: True, limit=1000):
    seen = []
    for _ in range(limit):
        assignment = assignment_claim(user, task)
        if assignment is None:
            break
        seen.append(assignment.pair_id)
        answer(user, assignment, picks_a(assignment.pair_id))
    return seen


def test_every_annotator_meets_a_gold_check_within_ten_pairs_then_at_the_rate(tmp_path):
    task = queued_pairs(tmp_path, count=60)
    gold = make_gold(task, 10)
    users = [member(f"expert{i}", task.project) for i in range(3)]  # 3 × 36 real pairs ≤ 50 × N
    for user in users:
        seen = work_through(user, task, limit=40)
        assert len(seen) == 40
        assert gold & set(seen[:10]), f"{user} met no gold check in their first 10 pairs"
        # One per window of 10: four in 40 pairs, never two in one window.
        assert sum(pair in gold for pair in seen) == 4
        for start in range(0, 40, 10):
            assert sum(pair in gold for pair in seen[start : start + 10]) == 1
    # Where the first falls differs between annotators (a hash keyed by the server's secret,
    # not every tenth pair). Over 20 annotators: three agree by chance 1 time in 100.
    positions = {
        next(p for p in range(1, 11) if golds_due(user_id, task, p) == 1)
        for user_id in range(1, 21)
    }
    assert len(positions) > 1, positions


def test_gold_checks_take_no_slots_never_decide_and_stay_out_of_the_figures(tmp_path):
    task = queued_pairs(tmp_path, count=12, annotators_per_pair=3)
    Task.objects.filter(pk=task.pk).update(gold_rate=0.5)  # one in every two pairs
    task.refresh_from_db()
    gold = make_gold(task, 2)
    users = [member(f"rater{i}", task.project) for i in range(5)]
    while True:  # the five take turns, as people working at the same time do
        claims = [(user, assignment_claim(user, task)) for user in users]
        if all(assignment is None for _user, assignment in claims):
            break
        for user, assignment in claims:
            if assignment is not None:
                answer(user, assignment, True)
    for pair in Pair.objects.filter(pk__in=gold):
        assert pair.status == Pair.Status.GOLD and pair.label == "" and pair.decided_by == ""
        assert pair.rating_count == 5  # five annotators answered, beyond the 3 slots
    report = call_report(task.project.slug)
    figures = report["tasks"]["t2i"]
    assert figures["gold"] == 2
    # 10 real pairs × 3 ratings; the 10 gold answers are not agreement data.
    assert figures["agreement"]["ratings"] == 30
    assert figures["annotators"]["rater0"]["gold"]["n"] == 2
    assert figures["annotators"]["rater0"]["gold"]["accuracy"] == 1.0
    assert figures["annotators"]["rater0"]["ratings"] == 6


def call_report(slug):
    import io
    import json

    out = io.StringIO()
    call_command("report", "--project", slug, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_a_tie_on_a_gold_check_counts_as_wrong(tmp_path):
    task = queued_pairs(tmp_path, count=30)
    Task.objects.filter(pk=task.pk).update(gold_rate=0.5)
    task.refresh_from_db()
    make_gold(task, 10)
    user = member("tie-giver", task.project)
    while (assignment := assignment_claim(user, task)) is not None:
        rating_submit(assignment.pk, user, RatingInput(overall=4))  # the centre: a tie
    correct, answered = gold_record(user.pk, task)
    assert answered >= 3 and correct == 0


def test_failing_gold_checks_pauses_access_and_readmission_keeps_every_rating(tmp_path):
    task = queued_pairs(tmp_path, count=60)
    Task.objects.filter(pk=task.pk).update(
        gold_action=Task.GoldAction.PAUSE, gold_min_answers=2, gold_min_accuracy=0.7, gold_rate=0.5
    )
    task.refresh_from_db()
    gold = make_gold(task, 10, side="A")
    sloppy = member("sloppy", task.project)
    careful = member("careful", task.project)
    seen = work_through(sloppy, task, picks_a=lambda pair_id: pair_id not in gold)
    pause = AnnotatorPause.objects.get(task=task, annotator=sloppy)
    assert pause.readmitted_at is None and "0 of 2" in pause.reason
    assert sum(pair in gold for pair in seen) == 2  # paused right after the second gold answer
    assert assignment_claim(sloppy, task) is None  # no new pair while paused
    kept = set(Rating.objects.filter(annotator=sloppy).values_list("pair_id", flat=True))
    assert kept == set(seen)
    # Someone who answers gold right is never paused.
    work_through(careful, task, limit=20)
    assert not AnnotatorPause.objects.filter(annotator=careful).exists()
    # Re-admitted: the ratings are all there and the queue opens again.
    lead = member("lead", task.project, role="lead")
    assert annotator_readmit(task, sloppy.pk, by=lead)
    assert set(Rating.objects.filter(annotator=sloppy).values_list("pair_id", flat=True)) == kept
    assert assignment_claim(sloppy, task) is not None


def test_gold_set_is_all_or_nothing_and_names_every_problem(tmp_path):
    task = queued_pairs(tmp_path, count=4)
    user = member("early", task.project)
    rated = assignment_claim(user, task)
    rating_submit(rated.pk, user, RatingInput(overall=5))
    fine = Pair.objects.filter(task=task).exclude(pk=rated.pair_id).first()
    entries = [
        GoldEntry(fine.external_id, "A"),
        GoldEntry("no-such-pair", "A"),
        GoldEntry(rated.pair.external_id, "B"),
    ]
    with pytest.raises(Invalid) as refused:
        gold_set(task, entries)
    assert "no-such-pair" in str(refused.value) and rated.pair.external_id in str(refused.value)
    assert not GoldAnswer.objects.exists()
    assert Pair.objects.get(pk=fine.pk).status == Pair.Status.QUEUED


def test_an_unanswered_gold_check_can_be_turned_back_into_a_pair(tmp_path):
    task = queued_pairs(tmp_path, count=3)
    (pair_id,) = make_gold(task, 1)
    gold_unset(Pair.objects.get(pk=pair_id))
    assert Pair.objects.get(pk=pair_id).status == Pair.Status.QUEUED
    make_gold(task, 1)
    Assignment.objects.create(pair_id=pair_id, annotator=member("x", task.project))
    Rating.objects.create(
        assignment=Assignment.objects.get(pair_id=pair_id),
        pair_id=pair_id,
        annotator_id=Assignment.objects.get(pair_id=pair_id).annotator_id,
        scale=7,
        overall=6,
    )
    with pytest.raises(Refused):
        gold_unset(Pair.objects.get(pk=pair_id))


def test_the_gold_file_is_checked_line_by_line(tmp_path):
    assert gold_entries_from_csv(b"pair_id,side,explanation\np1,a,because\n") == [
        GoldEntry("p1", "A", "because")
    ]
    for bad, message in [
        (b"id,label\np1,A\n", "header"),
        (b"pair_id,side\np1,tie\n", "line 2"),
        (b"pair_id,side\n,A\n", "line 2"),
        (b"pair_id,side\n", "no pair"),
        (b"\xff\xfe\x00", "UTF-8"),
        (b"pair_id,side\n" + b"p,A\n" * 800_000, "larger"),
    ]:
        with pytest.raises(Invalid, match=message):
            gold_entries_from_csv(bad)


def test_the_gold_set_command_sets_pairs_and_the_rate(tmp_path):
    task = queued_pairs(tmp_path, count=4)
    ids = list(Pair.objects.filter(task=task).values_list("external_id", flat=True))
    csv_file = tmp_path / "gold.csv"
    csv_file.write_text(f"pair_id,side\n{ids[0]},A\n{ids[1]},B\n")
    call_command("gold_set", str(csv_file), "--project", "ann", "--task", "t2i", "--rate", "0.2")
    task.refresh_from_db()
    assert task.gold_rate == 0.2
    assert dict(GoldAnswer.objects.values_list("pair__external_id", "side")) == {
        ids[0]: "A",
        ids[1]: "B",
    }
    csv_file.write_text("pair_id,side\nnope,A\n")
    with pytest.raises(CommandError, match="nothing changed"):
        call_command("gold_set", str(csv_file), "--project", "ann", "--task", "t2i")
    with pytest.raises(CommandError, match="no task"):
        call_command("gold_set", str(csv_file), "--project", "ann", "--task", "other")


def qualifying_task(tmp_path, pass_share=0.6):
    task = queued_pairs(tmp_path, count=12)
    Task.objects.filter(pk=task.pk).update(
        qualification_required=True, qualification_pass=pass_share, gold_rate=0
    )
    task.refresh_from_db()
    pairs = list(Pair.objects.filter(task=task).order_by("id")[:3])
    gold_set(
        task,
        [GoldEntry(p.external_id, "A", "A keeps the layout", qualification=True) for p in pairs],
    )
    return task, {p.pk for p in pairs}


def test_the_qualification_set_comes_first_and_passing_opens_the_queue(tmp_path):
    task, qualifying = qualifying_task(tmp_path)
    user = member("newcomer", task.project)
    seen = work_through(user, task, picks_a=lambda pair_id: True, limit=5)
    assert set(seen[:3]) == qualifying and not qualifying & set(seen[3:])
    result = Qualification.objects.get(task=task, annotator=user)
    assert (result.correct, result.answered, result.passed) == (3, 3, True)
    # Qualification answers are not gold checks of the queue: no gold record, no figures.
    assert gold_record(user.pk, task) == (0, 0)


def test_failing_the_qualification_holds_the_annotator_until_a_lead_admits_them(tmp_path):
    task, qualifying = qualifying_task(tmp_path)
    user = member("guesser", task.project)
    seen = work_through(user, task, picks_a=lambda pair_id: pair_id not in qualifying)
    assert set(seen) == qualifying  # the three answers, then nothing
    assert assignment_claim(user, task) is None
    result = Qualification.objects.get(task=task, annotator=user)
    assert (result.correct, result.answered, result.passed) == (0, 3, False)
    assert "0 of 3 qualification pairs" in task_hold_reason(user, task)
    lead = member("lead", task.project, role="lead")
    assert qualification_admit(task, user.pk, by=lead)
    assert task_hold_reason(user, task) is None
    assert assignment_claim(user, task).pair_id not in qualifying
    result.refresh_from_db()
    assert (result.correct, result.admitted_by) == (0, lead)  # the failed result stays on record


def test_a_qualification_answer_is_followed_by_its_feedback_and_mixed_gold_is_not(tmp_path, client):
    task, qualifying = qualifying_task(tmp_path)
    user = member("learner", task.project)
    client.force_login(user)
    first = assignment_claim(user, task)
    shown_b = 7 if not first.swapped else 1  # prefers B, whatever side it is on
    response = client.post(
        reverse("annotate", args=[first.pk]), {"overall": shown_b}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    expected_side = "Right" if first.swapped else "Left"
    assert f"Qualification: Not the expected answer: {expected_side} is better" in html
    assert "A keeps the layout" in html
    # A mixed gold check gets the same confirmation as any pair, and nothing else.
    Task.objects.filter(pk=task.pk).update(qualification_required=False)
    other = Pair.objects.filter(task=task).exclude(pk__in=qualifying).first()
    gold_set(task, [GoldEntry(other.external_id, "A", "secret")])
    assignment = Assignment.objects.create(pair=other, annotator=user, swapped=False)
    html = client.post(
        reverse("annotate", args=[assignment.pk]), {"overall": 1}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Qualification" not in html and "secret" not in html and "gold" not in html.lower()


def test_a_qualification_answer_is_final_once_its_feedback_showed_the_expected_side(tmp_path):
    """The attack: answer wrong, read the feedback, reopen the answer and correct it."""
    task, qualifying = qualifying_task(tmp_path, pass_share=1.0)
    user = member("gamer", task.project)
    first = assignment_claim(user, task)
    answer(user, first, side_right=False)
    with pytest.raises(AssignmentClosed):
        answer(user, first, side_right=True)
    work_through(user, task, picks_a=lambda pair_id: True)
    result = Qualification.objects.get(task=task, annotator=user)
    assert (result.correct, result.passed) == (2, False)


def test_a_gold_answer_can_be_corrected_only_within_the_grace_period(tmp_path):
    task = queued_pairs(tmp_path, count=3)
    (pair_id,) = make_gold(task, 1)
    user = member("slip", task.project)
    assignment = Assignment.objects.create(pair_id=pair_id, annotator=user)
    rating_submit(assignment.pk, user, RatingInput(overall=2))
    rating_submit(assignment.pk, user, RatingInput(overall=6))  # a slip, corrected at once
    later = timezone.now() + timedelta(minutes=task.project.edit_grace_minutes + 1)
    with pytest.raises(AssignmentClosed):
        rating_submit(assignment.pk, user, RatingInput(overall=2), now=later)


def test_two_claims_of_one_annotator_racing_for_a_gold_pair_share_one_assignment(tmp_path):
    task = queued_pairs(tmp_path, count=3)
    (pair_id,) = make_gold(task, 1)
    user = member("two-tabs", task.project)
    first = gold_assignment_create(user, pair_id, timezone.now())
    assert gold_assignment_create(user, pair_id, timezone.now()).pk == first.pk


def test_unsetting_gold_keeps_skips_and_flags(tmp_path):
    task = queued_pairs(tmp_path, count=3)
    (pair_id,) = make_gold(task, 1)
    flagger, leaser = member("flagger", task.project), member("leaser", task.project)
    flagged = Assignment.objects.create(pair_id=pair_id, annotator=flagger)
    assignment_flag(flagged.pk, flagger, "broken", "no image")
    Assignment.objects.create(pair_id=pair_id, annotator=leaser)
    gold_unset(Pair.objects.get(pk=pair_id))
    assert Flag.objects.filter(pair_id=pair_id).count() == 1
    assert list(Assignment.objects.filter(pair_id=pair_id).values_list("annotator", flat=True)) == [
        flagger.pk
    ]


def test_annotators_meet_the_gold_checks_in_different_orders(tmp_path):
    """The pick is a keyed hash (the preloading guess must name it in advance), not a shared
    sequence: every annotator has an order of their own."""
    task = queued_pairs(tmp_path, count=40, annotators_per_pair=4)
    Task.objects.filter(pk=task.pk).update(gold_rate=0.5)
    task.refresh_from_db()
    gold = make_gold(task, 6)
    orders = set()
    for i in range(4):
        seen = work_through(member(f"order{i}", task.project), task)
        orders.add(tuple(pair for pair in seen if pair in gold))
    assert all(set(order) == gold for order in orders)  # each meets every gold check
    # Four annotators in one order of six: 1 time in 720³ by chance.
    assert len(orders) > 1, orders


def test_a_nul_character_in_an_explanation_is_refused(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    pair = Pair.objects.filter(task=task).first()
    with pytest.raises(Invalid, match="NUL"):
        gold_set(task, [GoldEntry(pair.external_id, "A", "bad\x00text")])


def test_the_pair_count_does_not_move_when_a_gold_check_is_served(tmp_path):
    """ "Pair 8 of 40": a total that grows by one on a gold check would give it away."""
    task = queued_pairs(tmp_path, count=40)
    Task.objects.filter(pk=task.pk).update(gold_rate=0.2)
    task.refresh_from_db()
    gold = make_gold(task, 6)
    user = member("counter", task.project)
    totals, served = [], []
    while (assignment := assignment_claim(user, task)) is not None:
        totals.append(annotator_progress(user, [task], timezone.now())[0].total)
        served.append(assignment.pair_id in gold)
        answer(user, assignment, True)
    assert sum(served) == 6 and len(set(totals)) == 1, totals
    assert totals[0] == 40  # 34 real pairs and the 6 gold checks met among them


def test_gold_checks_added_mid_task_come_spread_out_not_in_a_burst(tmp_path):
    task = queued_pairs(tmp_path, count=80)
    user = member("veteran", task.project)
    for _ in range(40):
        answer(user, assignment_claim(user, task), True)
    pairs = Pair.objects.filter(task=task, status=Pair.Status.QUEUED).order_by("-id")[:6]
    gold = {p.pk for p in pairs}
    gold_set(task, [GoldEntry(p.external_id, "A") for p in pairs])
    served = []
    while (assignment := assignment_claim(user, task)) is not None:
        served.append(assignment.pair_id in gold)
        answer(user, assignment, True)
    assert sum(served) >= 4  # catching up: 4 were due by pair 40
    assert not any(a and b for a, b in zip(served, served[1:], strict=False)), (
        served
    )  # never two in a row
    firsts = [i for i, is_gold in enumerate(served) if is_gold]
    assert all(b - a >= 5 for a, b in zip(firsts, firsts[1:], strict=False)), (
        firsts
    )  # P/2 apart at least
