"""An expert's own work in a project, for the expert themselves: how many pairs they
rated per day, their active hours, their median time per pair, and the gold checks they have
answered for good, with the expected side and the lead's explanation.

The figures are the leads' figures over the same rows, so both pages agree:
- pairs rated per day: the tallies the overview's throughput reads (annotation.models.
  AnnotatorDay, counted in the rating's transaction; a correction is not a new rating);
- active hours: dashboards.selectors.hours.annotator_hours, the hours page's computation;
- median time per pair: the median of Rating.active_seconds over their own ratings, imported
  ones and gold checks apart, which is the median the annotator's page and the agreement page
  show a lead (metrics.annotators.annotator_stats over the same ratings).

What it never shows: a gold check before the expert's answer to it is final. A mixed-in gold
answer may still be corrected for the project's grace period after it was submitted
(annotation.selectors.rating_can_change); listing it sooner would hand them the expected side
while they can still change their answer, and would tell them which pair they just rated was a
check. So it appears once that period is over; a qualification answer is final at once (its
feedback already gave the side). Pairs handed out and not rated (leased, skipped, flagged) are
never read here, gold or not.

Query budget: own_work_figures reads 6 queries whatever the number of ratings, days or gold
checks (5 before the first rating); own_membership 2 more
(tests/expert_page/test_own_work.py asserts the page's count).
"""

import statistics
from datetime import date, datetime
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.utils.translation import gettext as _

from annotation.models import AnnotatorDay, Rating
from content.lifecycle import within_grace_q
from content.models import Pair
from content.rendering import content_summary
from dashboards.selectors.hours import annotator_hours
from projects.access import AnyUser
from projects.models import Membership, Project
from projects.scale import answers_expected_side, scale_labels, to_form
from projects.selectors import memberships_for_user

DAYS_SHOWN = 14  # the latest days with ratings; the totals count every day
GOLD_SHOWN = 50  # the latest final gold answers listed; the tally counts every one
PROMPT_CHARS = 80


def own_membership(user: AnyUser, slug: str) -> Membership | None:
    """The user's own membership of the project with this slug, any role; None when they are
    not a member or there is no such project (the page answers both with the same 404). The
    operator is no exception: this page is about one's own ratings, made as a member. Two
    queries (the membership with its project, its tasks prefetched)."""
    return memberships_for_user(user).filter(project__slug=slug).first()


def _shown_side(side: str, swapped: bool) -> str:
    """A canonical side as the expert saw it on their assignment (A on the right if swapped)."""
    left, right = _("Left"), _("Right")
    return {"A": right if swapped else left, "B": left if swapped else right}[side]


def _days(project: Project, user: User) -> dict[str, Any]:
    """Per day, newest first: pairs rated and active hours; and the totals. Three queries (one
    once nothing is rated)."""
    rated = dict(
        AnnotatorDay.objects.filter(project=project, annotator=user).values_list("day", "ratings")
    )
    hours_rows = annotator_hours(project, annotator_id=user.pk)["rows"]
    by_day: dict[date, float] = hours_rows[0]["by_day"] if hours_rows else {}
    days = sorted(set(rated) | set(by_day), reverse=True)
    return {
        "days": [
            {"day": day, "ratings": rated.get(day, 0), "hours": by_day.get(day)}
            for day in days[:DAYS_SHOWN]
        ],
        "days_total": len(days),
        "ratings_total": sum(rated.values()),
        "hours_total": hours_rows[0]["total_hours"] if hours_rows else 0.0,
    }


def _median_seconds(project: Project, user: User) -> float | None:
    """The median active time of their own ratings here, imported ones and gold checks apart
    (the leads' median). One query."""
    seconds = list(
        Rating.objects.filter(pair__project=project, annotator=user, imported=False)
        .exclude(pair__status=Pair.Status.GOLD)
        .values_list("active_seconds", flat=True)
    )
    return float(statistics.median(seconds)) if seconds else None


def _final_gold(project: Project, user: User, now: datetime) -> dict[str, Any]:
    """Their gold answers that can no longer change (the module's docstring), newest first:
    the latest GOLD_SHOWN with the pair's prompt, their score, the expected side in their
    Left/Right and the explanation; and how many of all of them named the expected side. Two
    queries."""
    answers = (
        Rating.objects.filter(
            pair__project=project,
            annotator=user,
            pair__status=Pair.Status.GOLD,
            pair__gold__isnull=False,
        )
        .filter(
            Q(pair__gold__qualification=True)
            | ~within_grace_q(project, "assignment__submitted_at", now)
        )
        .order_by("-created_at", "-id")
    )
    tally = answers.values_list("overall", "scale", "pair__gold__side")
    right = sum(answers_expected_side(overall, scale, side) for overall, scale, side in tally)
    rows = answers.values_list(
        "assignment_id",
        "pair__task__name",
        "pair__prompt__content",
        "overall",
        "scale",
        "assignment__swapped",
        "assignment__submitted_at",
        "pair__gold__side",
        "pair__gold__explanation",
        "pair__gold__qualification",
    )[:GOLD_SHOWN]
    listed = []
    for (
        assignment_id,
        task_name,
        prompt,
        overall,
        scale,
        swapped,
        submitted_at,
        expected,
        explanation,
        qualification,
    ) in rows:
        pressed = to_form(overall, scale, swapped)
        listed.append(
            {
                "assignment_id": assignment_id,
                "task": task_name,
                "prompt": content_summary(prompt, limit=PROMPT_CHARS),
                "answer": _(dict(scale_labels(scale)).get(pressed, str(pressed))),
                "expected": _shown_side(expected, swapped),
                "right": answers_expected_side(overall, scale, expected),
                "explanation": explanation,
                "qualification": qualification,
                "submitted_at": submitted_at,
            }
        )
    return {"gold_answers": listed, "gold_total": len(tally), "gold_right": right}


def own_work_figures(project: Project, user: User, *, now: datetime) -> dict[str, Any]:
    """Everything the expert's own page shows; `user` is the signed-in expert, a member of
    `project` (own_membership)."""
    return {
        **_days(project, user),
        "median_seconds": _median_seconds(project, user),
        "grace_minutes": project.edit_grace_minutes,
        **_final_gold(project, user, now),
    }
