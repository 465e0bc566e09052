"""One annotator's work in a project, for its leads: their ratings, their agreement
with the other experts on the pairs they shared, their speed, their gold checks, the flags they
raised and whether a task holds them back.

Every figure comes from the functions the agreement and hours pages use, over the same rows,
so the pages agree:
- agreement with the others: metrics.annotators.annotator_stats (leave one annotator out: each
  rating against the side of the mean of the other people's ratings of its pair; imported
  ratings and gold checks apart), per task and over the project, with a 95 % Wilson interval
  over the compared pairs (one rating per pair and annotator: the pairs are the units);
- speed: dashboards.selectors.hours (active time, imported ratings apart) and the median time
  per rating of annotator_stats; the speed and pattern flags of metrics.annotator_flags;
- gold checks: right when the side matches the expected one (a tie is wrong), the mixed-in
  checks counted apart from the qualification set, as metrics.annotator_quality counts them,
  and annotation.gold.selectors' history (pairs handed out, checks among them).

Query budget: annotator_figures reads 15 queries whatever the number of ratings, pairs, tasks,
gold checks, pauses or flags (tests/annotator_page/test_annotator_page.py asserts it), the page
3 more for its access checks. The ratings list is paginated; the rows the figures need are read
once, as values, for the annotator's pairs only.
"""

from collections import defaultdict
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Subquery

from annotation.gold.selectors import gold_histories
from annotation.models import AnnotatorPause, Flag, Qualification, Rating
from content.models import Pair
from dashboards.selectors.hours import annotator_hours
from metrics.annotator_flags import annotator_flags, wilson_interval
from metrics.annotators import RatingRow, annotator_stats, others_sides
from projects.models import Membership, Project, Task
from projects.scale import answers_expected_side, side_of, to_form
from projects.scale import center as scale_center

RATINGS_PER_PAGE = 50
GOLD_SHOWN = 50  # the latest gold answers listed; the accuracy counts every one
FLAGS_SHOWN = 50  # the latest flags listed; the count says how many in all
DAYS_SHOWN = 14  # the latest days with ratings in the speed table


def project_annotator(project: Project, user_id: int) -> Any:
    """The person whose work the project's leads may review: a member of the project (any
    role), or a former member who rated here (their ratings still count). None for anyone
    else, and for the placeholder accounts of imported ratings: the page answers 404 alike.
    `membership_role` is the role, or None for a former member. One query."""
    membership = Membership.objects.filter(project=project, user=OuterRef("pk"))
    rated = Rating.objects.filter(pair__project=project, annotator=OuterRef("pk"), imported=False)
    return (
        get_user_model()
        .objects.filter(pk=user_id, placeholder__isnull=True)
        .filter(Exists(membership) | Exists(rated))
        .annotate(membership_role=Subquery(membership.values("role")[:1]))
        .first()
    )


def _interval(matched: int, compared: int) -> list[float] | None:
    bounds = wilson_interval(matched, compared)
    return list(bounds) if bounds else None


def _agreement(
    rows: list[RatingRow[int, int]], user_id: int, center: float
) -> dict[str, Any] | None:
    """The annotator's figures of metrics.annotators over these rows (theirs and the others'
    on the same pairs), with the interval of the leave-one-out agreement."""
    stats = annotator_stats(rows, {}, center).get(user_id)
    if stats is None:
        return None
    matched = round((stats.loo_agreement or 0) * stats.compared)
    return {
        "ratings": stats.ratings,
        "compared": stats.compared,
        "agreement": stats.loo_agreement,
        "matched": matched,
        "interval": _interval(matched, stats.compared),
        "median_active_seconds": stats.median_active_seconds,
        "left_bias": stats.left_bias,
        "decisive": stats.decisive,
    }


def _shared_ratings(project: Project, user: User) -> list[tuple[Any, ...]]:
    """(task, annotator, pair, canonical overall, scale, active seconds, swapped, created_at) of
    every person's rating of the pairs the annotator rated, gold checks and imported ratings
    apart (the agreement page's rows), in the order they were made. One query."""
    theirs = Rating.objects.filter(pair__project=project, annotator=user).values("pair")
    return list(
        Rating.objects.filter(pair__project=project, pair__in=theirs, imported=False)
        .exclude(pair__status=Pair.Status.GOLD)
        .order_by("created_at", "id")
        .values_list(
            "pair__task_id",
            "annotator_id",
            "pair_id",
            "overall",
            "scale",
            "active_seconds",
            "assignment__swapped",
            "created_at",
        )
    )


def _gold(
    project: Project, user: User, tasks: list[Task]
) -> tuple[dict[int, dict[str, Any]], list[dict[str, Any]]]:
    """Per task the mixed-in gold checks' accuracy (as the agreement page counts it) and the
    queue's gold history; and the latest answers, newest first. Three queries."""
    rows = list(
        Rating.objects.filter(pair__project=project, annotator=user, pair__status=Pair.Status.GOLD)
        .order_by("-created_at", "-id")
        .values_list(
            "pair_id",
            "pair__external_id",
            "pair__task_id",
            "overall",
            "scale",
            "assignment__swapped",
            "pair__gold__side",
            "pair__gold__qualification",
            "created_at",
        )
    )
    histories = gold_histories(user, tasks)
    right: dict[int, list[bool]] = defaultdict(list)
    answers: list[dict[str, Any]] = []
    for pair_id, external_id, task_id, overall, scale, swapped, expected, qualifying, at in rows:
        is_right = answers_expected_side(overall, scale, expected)
        if not qualifying:
            right[task_id].append(is_right)
        if len(answers) < GOLD_SHOWN:
            answers.append(
                {
                    "pair_id": pair_id,
                    "external_id": external_id,
                    "task_id": task_id,
                    "expected": expected,
                    "given": side_of(overall, scale_center(scale)) or "tie",
                    "pressed": to_form(overall, scale, swapped),
                    "right": is_right,
                    "qualification": qualifying,
                    "created_at": at,
                }
            )
    by_task = {}
    for task in tasks:
        results = right.get(task.pk, [])
        correct = sum(results)
        handed, checks, since = histories.get(task.pk, (0, 0, None))
        by_task[task.pk] = {
            "n": len(results),
            "correct": correct,
            "accuracy": correct / len(results) if results else None,
            "interval": _interval(correct, len(results)),
            "below_threshold": bool(results)
            and len(results) >= task.gold_min_answers
            and correct / len(results) < task.gold_min_accuracy,
            "handed": handed,
            "checks": checks,
            "since_last": since,
        }
    return by_task, answers


def _ratings_page(
    project: Project, user: User, page: int, references: dict[int, str | None]
) -> dict[str, Any]:
    """One page of the annotator's ratings, newest first: each row the rating, its side, the
    key pressed and the side of the others' mean on its pair (`others`: None when nobody else
    rated it, or a gold check). Two queries."""
    ratings = Rating.objects.filter(pair__project=project, annotator=user)
    total = ratings.count()
    pages = max(1, -(-total // RATINGS_PER_PAGE))
    page = min(max(1, page), pages)  # past the last page: the last
    start = (page - 1) * RATINGS_PER_PAGE
    listed = ratings.select_related("pair__task", "assignment").order_by("-created_at", "-id")
    rows = [
        {
            "rating": rating,
            "side": side_of(rating.overall, scale_center(rating.scale)) or "tie",
            "pressed": to_form(rating.overall, rating.scale, rating.assignment.swapped),
            "others": references.get(rating.pair_id),
            "gold": rating.pair.status == Pair.Status.GOLD,
        }
        for rating in listed[start : start + RATINGS_PER_PAGE]
    ]
    return {"ratings": rows, "ratings_total": total, "page": page, "pages": pages}


def annotator_figures(project: Project, user: User, *, page: int = 1) -> dict[str, Any]:
    """Everything the annotator's page shows (the module's docstring says how each figure is
    computed); `user` comes from project_annotator."""
    tasks = list(project.tasks.order_by("slug"))
    membership = (
        Membership.objects.filter(project=project, user=user).prefetch_related("tasks").first()
    )
    # projects.access.tasks_for_membership's rule, on the tasks read above: those the membership
    # names, else all of the project's.
    named = {task.pk for task in membership.tasks.all()} if membership else set()
    covered = (named or {task.pk for task in tasks}) if membership else set()
    center = project.center

    # metrics.annotators' rows (annotator, pair, overall, seconds, swapped, created_at), all
    # tasks and per task; the pairs of a task are the task's, so "the others" stay within it.
    all_rows: list[tuple[Any, ...]] = []
    by_task_rows: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    own_shown: dict[int, list[tuple[int, float | None]]] = defaultdict(list)
    for task_id, annotator, pair_id, overall, scale, seconds, swapped, at in _shared_ratings(
        project, user
    ):
        row = (annotator, pair_id, overall, seconds, swapped, at)
        all_rows.append(row)
        by_task_rows[task_id].append(row)
        if annotator == user.pk:  # the key they pressed, in the order they rated
            own_shown[task_id].append((to_form(overall, scale, swapped), seconds))
    references = {
        row[1]: side
        for row, side in zip(all_rows, others_sides(all_rows, center), strict=True)
        if row[0] == user.pk
    }
    gold, gold_answers = _gold(project, user, tasks)
    pauses = list(
        AnnotatorPause.objects.filter(task__project=project, annotator=user)
        .select_related("readmitted_by", "paused_by")
        .order_by("-paused_at", "-id")
    )
    qualifications = {
        q.task_id: q for q in Qualification.objects.filter(task__project=project, annotator=user)
    }
    flags = Flag.objects.filter(pair__project=project, reported_by=user)
    flag_rows = list(
        flags.select_related("pair", "resolved_by").order_by("-created_at", "-id")[:FLAGS_SHOWN]
    )
    hours = annotator_hours(project, annotator_id=user.pk)["rows"]
    speed = hours[0] if hours else None
    if speed:  # the hours page's total over its ratings
        speed["seconds_per_rating"] = speed["total_hours"] * 3600 / speed["ratings"]

    task_rows = []
    for task in tasks:
        open_pause = next(
            (p for p in pauses if p.task_id == task.pk and p.readmitted_at is None), None
        )
        qualification = qualifications.get(task.pk)
        figures = {
            "task": task,
            "covered": task.pk in covered,
            "agreement": _agreement(by_task_rows.get(task.pk, []), user.pk, center),
            "flags": annotator_flags(
                own_shown.get(task.pk, []), project.scale_points, task.min_active_seconds
            ).flags,
            "gold": gold[task.pk],
            "paused": open_pause,
            "qualification": qualification,
            "not_admitted": bool(qualification and not qualification.passed),
            "pauses": [p for p in pauses if p.task_id == task.pk],
        }
        figures["held"] = bool(open_pause) or figures["not_admitted"]
        if (
            figures["covered"]
            or figures["agreement"]
            or figures["gold"]["handed"]
            or figures["gold"]["n"]
            or figures["pauses"]
            or qualification
        ):
            task_rows.append(figures)
    names = {task.pk: task.name for task in tasks}
    for answer in gold_answers:
        answer["task"] = names.get(answer["task_id"], "?")
    return {
        "annotator": user,
        "member": membership is not None,
        "role": membership.get_role_display() if membership else None,
        # annotation.gold.services.annotator_pause's rule: only annotators are paused.
        "can_pause": bool(membership and membership.role == Membership.Role.ANNOTATOR),
        "tasks": task_rows,
        "overall": _agreement(all_rows, user.pk, center),
        "speed": speed,
        "speed_days": sorted(speed["by_day"].items(), reverse=True)[:DAYS_SHOWN] if speed else [],
        "gold_answers": gold_answers,
        "flags_raised": flag_rows,
        "flags_total": flags.count(),
        **_ratings_page(project, user, page, references),
    }
