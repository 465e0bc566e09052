"""What the annotate page shows for one assignment, blinded: no generator names, no external
ids, no other annotator's rating, no judge verdict."""

import json
from datetime import datetime, timedelta

from django.utils.timesince import timesince
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from annotation.models import Assignment, Flag
from annotation.selectors.assets import assets_by_sha
from annotation.selectors.assignments import assignment_position, recent_submissions, undoable_skip
from annotation.selectors.pair_threads import annotator_threads
from annotation.selectors.pairs import rating_can_change
from annotation.selectors.progress import annotator_progress
from annotation.services.assignments import SKIP_PRESETS
from content.rendering import content_parts, content_summary, guidelines_html, image_shas
from projects.scale import scale_labels, scale_short_labels, to_form


def _stored_form_values(assignment: Assignment) -> dict[str, str]:
    """The annotator's saved rating, back in Left/Right orientation, keyed like the form."""
    rating = getattr(assignment, "rating", None)
    if rating is None:
        return {}
    scale, swapped = rating.scale, assignment.swapped
    values = {
        "overall": str(to_form(rating.overall, scale, swapped)),
        "rationale": rating.rationale,
    }
    for score in rating.aspect_scores.all():
        values[f"aspect_{score.aspect}"] = str(to_form(score.score, scale, swapped))
    return values


def _ago(moment: datetime | None, now: datetime) -> str:
    """How long ago, in words: "just now" under a minute (timesince says "0 minutes")."""
    if moment is None:
        return ""
    if now - moment < timedelta(minutes=1):
        return _("just now")
    return _("%(time)s ago") % {"time": timesince(moment, now)}


def undo_context(user, task, now: datetime) -> dict:
    """What annotation/_feedback.html needs to offer Undo: the skip or flag it would take back
    (annotation.selectors.undoable_skip), and whether it is a flag."""
    undo = undoable_skip(user, task, now)
    return {"undo": undo, "undo_flagged": undo is not None and hasattr(undo, "flag")}


def _short_label(short: str) -> str:
    """A point's compact label (projects.scale) with its side's letter in the page's language."""
    letters = {
        "L": pgettext("the scale's short label: Left", "L"),
        "R": pgettext("the scale's short label: Right", "R"),
    }
    side = letters.get(short[:1])
    return side + short[1:] if side else short


def _recent(user, task, current: Assignment, now: datetime) -> list[dict]:
    """The annotator's latest ratings as the list shows them: the pair's prompt, the overall
    score in words (their Left/Right) and whether it can still be corrected."""
    items = []
    for assignment in recent_submissions(user, task):
        if assignment.pk == current.pk:
            continue
        rating = getattr(assignment, "rating", None)
        words = ""
        if rating is not None:
            score = to_form(rating.overall, rating.scale, assignment.swapped)
            words = _(dict(scale_labels(rating.scale)).get(score, str(score)))
        items.append(
            {
                "assignment": assignment,
                "prompt": content_summary(assignment.pair.prompt.content, limit=60),
                "score": words,
                "when": _ago(assignment.submitted_at, now),
                "editable": rating_can_change(assignment, now),
            }
        )
    return items


def workspace_context(
    user,
    assignment: Assignment,
    now: datetime,
    *,
    errors: dict[str, str] | None = None,
    posted=None,
    message: str = "",
    return_to: int | None = None,
) -> dict:
    pair, task, project = assignment.pair, assignment.pair.task, assignment.pair.project
    left, right = pair.response_a, pair.response_b
    if assignment.swapped:
        left, right = right, left
    assets = assets_by_sha(image_shas(pair.prompt.content, left.content, right.content))
    values = dict(posted.items()) if posted is not None else _stored_form_values(assignment)
    rated = assignment.status == Assignment.Status.SUBMITTED
    editable = rating_can_change(assignment, now)
    labels = [
        (value, _(label), _short_label(short))
        for (value, label), short in zip(
            scale_labels(project.scale_points),
            scale_short_labels(project.scale_points),
            strict=True,
        )
    ]
    aspects = [
        {
            **aspect,
            "field": f"aspect_{aspect['key']}",
            "value": values.get(f"aspect_{aspect['key']}"),
        }
        for aspect in task.aspects
    ]
    progress = annotator_progress(user, [task], now)[0]
    guidelines = "\n\n".join(text for text in (project.guidelines, task.guidelines) if text)
    return {
        "assignment": assignment,
        "task": task,
        "project": project,
        "prompt": pair.prompt,
        "prompt_parts": content_parts(pair.prompt.content, assets),
        "prompt_metadata": json.dumps(pair.prompt.metadata, indent=2, ensure_ascii=False)
        if pair.prompt.metadata
        else "",
        "left_parts": content_parts(left.content, assets),
        "right_parts": content_parts(right.content, assets),
        "guidelines": guidelines_html(guidelines) if guidelines else "",
        "labels": labels,
        "values": values,
        "aspects": aspects,
        "errors": errors or {},
        "message": message,
        "rated": rated,
        "editable": editable,
        "progress": progress,
        "position": assignment_position(assignment),
        "total": max(progress.total, 1),
        "finished": progress.finished,  # the bar: pairs done (rated, skipped, flagged) of total
        # Undo is offered beside the pair the annotator holds, not on a pair reopened.
        **(undo_context(user, task, now) if assignment.status == Assignment.Status.LEASED else {}),
        "recent": _recent(user, task, assignment, now),
        "flag_reasons": Flag.Reason.choices,
        "skip_presets": SKIP_PRESETS,
        "return_to": return_to,
        "grace_minutes": project.edit_grace_minutes,
        # Their questions about the pair, and others' once they have rated it (blinded).
        "threads": annotator_threads(user, assignment),
    }
