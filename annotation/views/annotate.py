"""The annotator's pages: claim the next pair, show it, take the rating.

With htmx the form posts in the background and the answer is the next pair's workspace
(swapped into the page, URL pushed); without JavaScript the same form posts normally and
is answered with a redirect to the next pair.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.gold.selectors import qualification_feedback, task_hold_reason
from annotation.models import Assignment
from annotation.selectors.assignments import (
    assignment_for_annotator,
    current_lease,
    task_of_assignment,
)
from annotation.selectors.progress import annotator_progress, next_task_for
from annotation.selectors.quotas import quota_reached_note
from annotation.selectors.upcoming import upcoming_images
from annotation.services.assignments import (
    AssignmentClosed,
    assignment_claim,
    assignment_flag,
    assignment_skip,
)
from annotation.services.ratings import RatingInput, RatingInvalid, rating_submit
from annotation.services.skip_undo import assignment_undo
from annotation.views.workspace import undo_context, workspace_context
from content.models import Pair
from core.errors import DomainError
from core.htmx import render_fragment_or_page, varies_on_htmx, wants_fragment
from core.page_errors import domain_errors_shown_by, rerender_status
from core.whole_numbers import whole_number
from projects.access import task_for_annotator

# Pages that change with every rating are never cached: Back must show the saved state, not
# a stale form (htmx's own history cache is off for the annotate page: annotate.html).


def _done(request, task, template: str = "annotation/done.html"):
    now = timezone.now()
    context = {
        "task": task,
        "next_task": next_task_for(request.user, task, now),
        "held": task_hold_reason(request.user, task),
        "quota_note": quota_reached_note(request.user, task, now),
        **undo_context(request.user, task, now),  # the last pair's skip can still be undone
    }
    return varies_on_htmx(render(request, template, context))


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def task_next(request, project_slug: str, task_slug: str):
    """Resume the current pair or claim a new one (POST); say so when nothing is left.

    A GET (a link, a reload, a page of another site) claims nothing: it opens the pair the
    annotator already holds, or offers a button that posts the claim."""
    task = task_for_annotator(request.user, project_slug, task_slug)
    if request.method == "GET":
        current = current_lease(request.user, task)
        if current is not None:
            return redirect("annotate", assignment_id=current.pk)
        progress = annotator_progress(request.user, [task], timezone.now())[0]
        if not progress.remaining:
            return _done(request, task)
        return render(request, "annotation/ready.html", {"task": task, "progress": progress})
    assignment = assignment_claim(request.user, task)
    if assignment is None:
        return _done(request, task)
    return redirect("annotate", assignment_id=assignment.pk)


def _rating_input(post) -> RatingInput:
    aspects = {
        name.removeprefix("aspect_"): value
        for name, value in post.items()
        if name.startswith("aspect_")
    }
    return RatingInput(
        overall=post.get("overall"),
        aspects=aspects,
        rationale=post.get("rationale", ""),
        active_seconds=post.get("active_seconds"),
    )


def _skip_reason(post) -> str:
    """A preset reason, with the annotator's note when they wrote one ("Other" is the note)."""
    reason = post.get("skip_reason", "").strip()
    note = post.get("skip_note", "").strip()
    if reason == "other" or not reason:
        return note
    return f"{reason}: {note}" if note else reason


def _apply(request, assignment_id: int) -> str:
    """Run the posted action through its service; the confirmation to show."""
    action = request.POST.get("action", "submit")
    if action == "submit":
        rating = rating_submit(assignment_id, request.user, _rating_input(request.POST))
        if rating.pair.status == Pair.Status.GOLD:  # a qualification answer gets feedback
            feedback = qualification_feedback(request.user, assignment_id)
            if feedback is not None:
                messages.info(request, feedback)
        return _("Changes saved.") if rating.resubmitted else _("Rating saved.")
    if action == "skip":
        assignment_skip(assignment_id, request.user, _skip_reason(request.POST))
        return _("Pair skipped.")
    if action == "flag":
        assignment_flag(
            assignment_id,
            request.user,
            request.POST.get("flag_reason", ""),
            request.POST.get("flag_note", ""),
        )
        return _("Flagged to the leads; the pair is skipped for you.")
    raise AssignmentClosed(_("Unknown action."))


def _return_to(request) -> int | None:
    """Where the annotator came from when they reopened an earlier rating (an assignment id;
    only ever shown through assignment_for_annotator, so no one else's)."""
    value = request.POST.get("return_to") or request.GET.get("from") or ""
    return whole_number(value)


def _workspace(request, assignment: Assignment, *, status: int = 200, **extra):
    context = workspace_context(request.user, assignment, timezone.now(), **extra)
    return render_fragment_or_page(
        request, "annotation/_workspace.html", "annotation/annotate.html", context, status
    )


def _workspace_with_error(request, error: DomainError, assignment_id: int):
    """The pair again with what went wrong: a rating's errors beside its fields and the
    entries kept, or the refusal with a link to the next pair."""
    assignment = assignment_for_annotator(request.user, assignment_id)
    status = rerender_status(error)
    if isinstance(error, RatingInvalid):
        return _workspace(
            request,
            assignment,
            status=status,
            errors=error.errors,
            posted=request.POST,
            return_to=_return_to(request),
        )
    return _workspace(request, assignment, status=status, message=error.message)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
@domain_errors_shown_by(_workspace_with_error)
def annotate(request, assignment_id: int):
    if request.method == "GET":
        assignment = assignment_for_annotator(request.user, assignment_id)
        return _workspace(request, assignment, return_to=_return_to(request))
    task = task_of_assignment(request.user, assignment_id)  # 404 unless theirs
    return_to = _return_to(request)
    messages.success(request, _apply(request, assignment_id))

    following = _back_where_they_were(request, return_to) or assignment_claim(request.user, task)
    # A task a lead archived meanwhile has no page of its own any more: home, with a word.
    archived = following is None and task.archived_at is not None
    if archived:
        messages.info(
            request,
            _("Task %(task)s was archived by a lead: no more pairs in it.") % {"task": task.name},
        )
    if not wants_fragment(request):
        if archived:
            return redirect("home")
        if following is None:
            return redirect("task-next", project_slug=task.project.slug, task_slug=task.slug)
        return redirect("annotate", assignment_id=following.pk)
    if following is None:
        response = _done(request, task, "annotation/_done.html")
        next_url = reverse("task-next", args=[task.project.slug, task.slug])
        response["HX-Push-Url"] = reverse("home") if archived else next_url
        return response
    # Loaded again with everything the page shows in three queries, instead of one per relation.
    response = _workspace(request, assignment_for_annotator(request.user, following.pk))
    response["HX-Push-Url"] = reverse("annotate", args=[following.pk])
    return response


def _back_where_they_were(request, return_to: int | None) -> Assignment | None:
    """After correcting an earlier rating: the pair the annotator was on, if it still waits
    for them (otherwise the next pair is claimed as usual)."""
    if return_to is None:
        return None
    try:
        assignment = assignment_for_annotator(request.user, return_to)
    except Http404:
        return None
    return assignment if assignment.status == Assignment.Status.LEASED else None


def _undo_refused(request, error: DomainError, assignment_id: int):
    """The pair the annotator holds again (where they pressed Undo), with why it was refused."""
    task = task_of_assignment(request.user, assignment_id)
    current = current_lease(request.user, task)
    shown = assignment_for_annotator(request.user, current.pk if current else assignment_id)
    return _workspace(request, shown, status=error.status, message=error.message)


@never_cache
@login_required
@require_POST
@domain_errors_shown_by(_undo_refused)
def annotate_undo(request, assignment_id: int):
    """Take back the annotator's last skip or flag (annotation/services/skip_undo.py): the pair
    is theirs again and shown next."""
    task_of_assignment(request.user, assignment_id)  # 404 unless theirs
    assignment_undo(assignment_id=assignment_id, user=request.user)
    messages.success(request, _("Undone: the pair is yours to rate again."))
    if not wants_fragment(request):
        return redirect("annotate", assignment_id=assignment_id)
    response = _workspace(request, assignment_for_annotator(request.user, assignment_id))
    response["HX-Push-Url"] = reverse("annotate", args=[assignment_id])
    return response


@never_cache
@login_required
@require_GET
def annotate_upcoming(request, assignment_id: int):
    """The addresses of the images of the pair most likely next (JSON), which the page preloads
    while the expert rates this one (static/prefetch.js); a guess that claims nothing. 404
    unless the assignment is theirs."""
    shas = upcoming_images(request.user, assignment_id, timezone.now())
    return JsonResponse({"images": [reverse("asset-file", args=[sha]) for sha in shas]})
