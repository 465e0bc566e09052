"""Conversations on a pair: the annotator's question from the annotate page, the lead's answer
and internal note from the pair's page (its questions card comes from
annotation/templatetags/pair_threads.py, so the pair page's view reads nothing for it).

The question form posts in the background (static/threads.js) and is answered with the
annotator's questions menu alone, so a rating in progress on the page is kept; without
JavaScript it posts normally and is answered with a redirect to the pair. The lead's forms
post, redirect and get, with the outcome as a message on the pair's page. Too many posts in
a short time (core/rate_limits.py) answer 429: the menu with the refusal and what was typed,
or a page saying when to try again.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.access import own_assignments
from annotation.models import PairThread
from annotation.selectors.pair_threads import annotator_threads
from annotation.services.pair_threads import (
    pair_note_add,
    question_answer,
    question_ask,
)
from content.models import Pair
from core.errors import DomainError, NotFound
from core.htmx import varies_on_htmx, wants_fragment
from core.page_errors import INVALID_FORM_SHOWN_AGAIN
from core.rate_limits import RateLimited, rate_limited_page
from projects.access import project_for_lead


def _annotator_menu(request, assignment_id: int, *, status: int = 200, **extra):
    assignment = own_assignments(request.user).filter(pk=assignment_id).first()
    if assignment is None:
        raise Http404("no such assignment")
    context = {
        "assignment": assignment,
        "threads": annotator_threads(request.user, assignment),
        "thread_menu_open": True,
        **extra,
    }
    response = render(request, "annotation/_thread_annotator.html", context, status=status)
    return varies_on_htmx(response)


@never_cache
@login_required
@require_POST
def question_ask_view(request, assignment_id: int):
    body = request.POST.get("body", "")
    back = reverse("annotate", args=[assignment_id]) + "#pair-thread"
    try:
        question_ask(assignment_id=assignment_id, user=request.user, body=body)
    except RateLimited as error:
        if not wants_fragment(request):
            return rate_limited_page(request, error, back=back)
        menu = _annotator_menu(
            request, assignment_id, status=429, thread_error=error.message, thread_body=body
        )
        menu["Retry-After"] = str(error.retry_after)
        return menu
    except NotFound:
        raise  # the page's 404 (core/page_errors.py), not a message
    except DomainError as error:
        if not wants_fragment(request):
            messages.error(request, _("Question not sent: %(error)s") % {"error": error.message})
            return redirect(back)
        # Shown in place, with what was typed: 422 for an input error, 409 for a refusal
        # (the annotate page swaps both in: annotate.html's responseHandling).
        status = INVALID_FORM_SHOWN_AGAIN if error.status == 400 else error.status
        return _annotator_menu(
            request, assignment_id, status=status, thread_error=error.message, thread_body=body
        )
    sent = _("Your question went to the leads.")
    if not wants_fragment(request):
        messages.success(request, sent)
        return redirect(back)
    return _annotator_menu(request, assignment_id, thread_sent=sent)


def _led_pair(request, slug: str, pair_id: int) -> Pair:
    """The pair, in a project the user leads (404 for anyone else's, 403 for its annotators,
    as every lead page)."""
    project = project_for_lead(request.user, slug)
    pair = Pair.objects.filter(project=project, pk=pair_id).first()
    if pair is None:
        raise Http404("no such pair in this project")
    return pair


def _pair_questions(slug: str, pair_id: int) -> str:
    return reverse("dash-pair", args=[slug, pair_id]) + "#questions"


def _back_to_pair(slug: str, pair_id: int):
    return redirect(_pair_questions(slug, pair_id))


@login_required
@require_POST
def thread_answer_view(request, slug: str, pair_id: int, thread_id: int):
    pair = _led_pair(request, slug, pair_id)
    if not PairThread.objects.filter(pk=thread_id, pair=pair).exists():
        raise Http404("no such question on this pair")
    try:
        question_answer(thread_id=thread_id, lead=request.user, body=request.POST.get("body", ""))
    except NotFound:
        raise  # the page's 404 (core/page_errors.py), not a message
    except RateLimited as error:
        return rate_limited_page(request, error, back=_pair_questions(slug, pair_id))
    except DomainError as error:
        messages.error(request, _("Answer not sent: %(error)s") % {"error": error.message})
    else:
        messages.success(
            request, _("Answer sent; the annotator sees it on their page of the pair.")
        )
    return _back_to_pair(slug, pair_id)


@login_required
@require_POST
def pair_note_view(request, slug: str, pair_id: int):
    pair = _led_pair(request, slug, pair_id)
    try:
        pair_note_add(pair_id=pair.pk, lead=request.user, body=request.POST.get("body", ""))
    except NotFound:
        raise  # the page's 404 (core/page_errors.py), not a message
    except RateLimited as error:
        return rate_limited_page(request, error, back=_pair_questions(slug, pair_id))
    except DomainError as error:
        messages.error(request, _("Note not saved: %(error)s") % {"error": error.message})
    else:
        messages.success(request, _("Note saved; only the project's leads see it."))
    return _back_to_pair(slug, pair_id)
