"""The bell's pages: the signed-in user's notifications (mark read, mark all read: POST only)
and their choices of what to be told and how. A user reaches only their own notifications:
another user's id answers 404, exactly like a missing one, and so does a notification about a
project where they no longer have the role that got it (notifications.selectors). Every post
is limited per user (core/rate_limits.py): too many answer 429 and change nothing."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from core.mail import mail_configured
from core.rate_limits import RateLimited, rate_limited_page
from notifications.messages import about_self, notification_link, notification_text
from notifications.models import NotificationKind
from notifications.selectors import (
    kinds_for,
    notifications_of,
    notifications_recent,
    pair_names,
    preferences_of,
)
from notifications.services import (
    notification_mark_read,
    notifications_mark_all_read,
    preferences_save,
)
from projects.access import signed_in


@login_required
def notification_list(request: HttpRequest) -> HttpResponse:
    user = signed_in(request.user)
    rows = []
    notifications = notifications_recent(user)
    names = pair_names(notifications)
    for notification in notifications:
        about_recipient = about_self(notification.kind, notification.data, user.pk)
        data = {**notification.data, **names.get(notification.pk, {})}
        rows.append(
            {
                "notification": notification,
                "text": notification_text(notification.kind, data, about_recipient=about_recipient),
                "link": notification_link(
                    notification.kind,
                    notification.data,
                    notification.project.slug,
                    about_recipient=about_recipient,
                ),
            }
        )
    # "Mark all read" shows when the bell counts any unread (older ones too).
    return render(request, "notifications/list.html", {"rows": rows})


@login_required
@require_POST
def notification_read(request: HttpRequest, notification_id: int) -> HttpResponse:
    user = signed_in(request.user)
    notification = get_object_or_404(notifications_of(user), pk=notification_id)
    try:
        notification_mark_read(notification=notification)
    except RateLimited as limited:
        return rate_limited_page(request, limited, back=reverse("notifications"))
    return redirect("notifications")


@login_required
@require_POST
def notification_read_all(request: HttpRequest) -> HttpResponse:
    user = signed_in(request.user)
    try:
        marked = notifications_mark_all_read(user=user)
    except RateLimited as limited:
        return rate_limited_page(request, limited, back=reverse("notifications"))
    messages.success(
        request,
        ngettext(
            "%(count)s notification marked read.", "%(count)s notifications marked read.", marked
        )
        % {"count": marked},
    )
    return redirect("notifications")


@login_required
@require_http_methods(["GET", "POST"])
def notification_settings(request: HttpRequest) -> HttpResponse:
    user = signed_in(request.user)
    kinds = kinds_for(user)
    chosen = preferences_of(user)
    sends_mail = mail_configured()
    if request.method == "POST":
        # Without mail the form has no e-mail boxes: the e-mail choices are kept as they are.
        try:
            preferences_save(
                user=user,
                choices={
                    kind: (
                        f"in_app:{kind}" in request.POST,
                        f"email:{kind}" in request.POST if sends_mail else chosen[kind][1],
                    )
                    for kind in kinds
                },
            )
        except RateLimited as limited:
            return rate_limited_page(request, limited, back=reverse("notification-settings"))
        messages.success(request, gettext("Notification settings saved."))
        return redirect("notification-settings")
    labels = dict(NotificationKind.choices)
    rows = [
        {"kind": kind, "label": labels[kind], "in_app": chosen[kind][0], "email": chosen[kind][1]}
        for kind in kinds
    ]
    context = {"rows": rows, "sends_mail": sends_mail, "has_email": bool(user.email)}
    return render(request, "notifications/settings.html", context)
