"""A project's webhooks page (its leads only; anyone else's project answers 404 like a
missing one): subscribe the project to kinds of event at a destination the operator allowed
for it, see the recent deliveries, re-send one. Nothing posted here is ever a URL: the
destination is chosen by id among the allowed ones, and any other field is ignored. Each post
is limited per lead (core/rate_limits.py): too many answer 429 and change nothing."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import Invalid
from core.rate_limits import RateLimited, rate_limited_page
from projects.access import project_for_lead
from webhooks.models import WebhookKind
from webhooks.selectors import deliveries_recent, destinations_for_project, subscriptions_of
from webhooks.services import delivery_resend, subscription_delete, subscription_save


def _page(slug: str) -> str:
    return reverse("project-webhooks", args=[slug])


def _id(raw: str | None) -> int:
    try:
        return int(raw or "")
    except ValueError:
        raise Http404("no such destination") from None


@login_required
@require_http_methods(["GET", "POST"])
def webhooks_page(request, slug: str):
    project = project_for_lead(request.user, slug)
    status = 200
    error = ""
    if request.method == "POST":
        try:
            subscription_save(
                project=project,
                destination_id=_id(request.POST.get("destination")),
                kinds=request.POST.getlist("kinds"),
                by=request.user.pk,
            )
        except RateLimited as limited:
            return rate_limited_page(request, limited, back=_page(slug))
        except Invalid as invalid:
            error, status = invalid.message, 400
        else:
            messages.success(request, _("Subscription saved."))
            return redirect("project-webhooks", slug=slug)
    labels = dict(WebhookKind.choices)
    subscriptions = [
        {"subscription": subscription, "labels": [labels.get(k, k) for k in subscription.kinds]}
        for subscription in subscriptions_of(project)
    ]
    context = {
        "project": project,
        "destinations": list(destinations_for_project(project).only("pk", "name")),
        "subscriptions": subscriptions,
        "kinds": WebhookKind.choices,
        "deliveries": deliveries_recent(project),
        "error": error,
    }
    return render(request, "webhooks/project_webhooks.html", context, status=status)


@login_required
@require_POST
def subscription_remove(request, slug: str, subscription_id: int):
    project = project_for_lead(request.user, slug)
    try:
        subscription_delete(project=project, subscription_id=subscription_id, by=request.user.pk)
    except RateLimited as limited:
        return rate_limited_page(request, limited, back=_page(slug))
    messages.success(request, _("Subscription removed."))
    return redirect("project-webhooks", slug=slug)


@login_required
@require_POST
def delivery_resend_view(request, slug: str, delivery_id: int):
    project = project_for_lead(request.user, slug)
    try:
        copy = delivery_resend(project=project, delivery_id=delivery_id, by=request.user.pk)
    except RateLimited as limited:
        return rate_limited_page(request, limited, back=_page(slug) + "#deliveries")
    messages.success(
        request,
        _("Delivery %(delivery)s re-sent as delivery %(copy)s.")
        % {"delivery": delivery_id, "copy": copy.pk},
    )
    return redirect("project-webhooks", slug=slug)
