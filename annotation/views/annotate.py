"""The annotator's pages: claim the next pair, show it, take the rating.

With htmx the form posts in the background and the answer is the next pair's workspace
(swapped into the page, URL pushed); without JavaScript the same form posts normally and
is answered with a redirect to the next pair.
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from annotation.models import Assignment
from annotation.selectors import (
    assignment_for_annotator,
    task_for_annotator,
    task_of_assignment,
)
from annotation.services.assignments import (
    AssignmentClosed,
    assignment_claim,
    assignment_flag,
    assignment_skip,
)
from annotation.services.ratings import RatingInput, RatingInvalid, rating_submit
from annotation.views.workspace import workspace_context
from config.htmx import render_fragment_or_page, varies_on_htmx, wants_fragment


@login_required
@require_http_methods(["GET", "POST"])
def task_next(request, project_slug: str, task_slug: str):
    """Resume the current pair or claim a new one; say so when nothing is left."""
    task = task_for_annotator(request.user, project_slug, task_slug)
    assignment = assignment_claim(request.user, task)
    if assignment is None:
        return render(request, "annotation/done.html", {"task": task})
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


def _apply(request, assignment_id: int) -> None:
    """Run the posted action through its service."""
    action = request.POST.get("action", "submit")
    if action == "submit":
        rating_submit(assignment_id, request.user, _rating_input(request.POST))
    elif action == "skip":
        assignment_skip(assignment_id, request.user, request.POST.get("skip_reason", ""))
    elif action == "flag":
        assignment_flag(
            assignment_id,
            request.user,
            request.POST.get("flag_reason", ""),
            request.POST.get("flag_note", ""),
        )
    else:
        raise AssignmentClosed("Unknown action.")


def _workspace(request, assignment: Assignment, *, status: int = 200, **extra):
    context = workspace_context(request.user, assignment, timezone.now(), **extra)
    return render_fragment_or_page(
        request, "annotation/_workspace.html", "annotation/annotate.html", context, status
    )


@login_required
@require_http_methods(["GET", "POST"])
def annotate(request, assignment_id: int):
    if request.method == "GET":
        return _workspace(request, assignment_for_annotator(request.user, assignment_id))
    task = task_of_assignment(request.user, assignment_id)  # 404 unless theirs
    try:
        _apply(request, assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("no such assignment") from None
    except RatingInvalid as invalid:
        assignment = assignment_for_annotator(request.user, assignment_id)
        return _workspace(
            request, assignment, status=422, errors=invalid.errors, posted=request.POST
        )
    except AssignmentClosed as closed:
        assignment = assignment_for_annotator(request.user, assignment_id)
        return _workspace(request, assignment, status=409, message=str(closed))

    following = assignment_claim(request.user, task)
    if not wants_fragment(request):
        if following is None:
            return redirect("task-next", project_slug=task.project.slug, task_slug=task.slug)
        return redirect("annotate", assignment_id=following.pk)
    if following is None:
        response = varies_on_htmx(render(request, "annotation/_done.html", {"task": task}))
        response["HX-Push-Url"] = reverse("task-next", args=[task.project.slug, task.slug])
        return response
    response = _workspace(request, assignment_for_annotator(request.user, following.pk))
    response["HX-Push-Url"] = reverse("annotate", args=[following.pk])
    return response
