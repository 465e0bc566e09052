"""The lead's members page (members, their roles and tasks; invitations) and the invitee's
page behind an invitation link.

Leads reach only their projects' memberships (`project_for_lead`, then ids looked up inside
the project: another project's id is a 404). The invitation page needs no sign-in; its posts
are counted like sign-ins (core/login_limits.py), keyed by the link, and every link that
cannot be used answers the same 404 page."""

import math

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from annotation.selectors.members import former_members, project_leases, project_members
from annotation.services.assignments import assignment_release
from annotation.services.members import membership_deactivate
from core.errors import DomainError
from core.login_limits import login_failed, login_refusal
from core.mail import mail_configured
from core.page_errors import domain_errors_shown_by, errors_on_form, refusal_as_message
from projects.access import project_for_lead
from projects.forms import AcceptForm, InvitationForm, MemberAddForm, MembershipForm
from projects.models import Membership
from projects.selectors import (
    invitation_for_token,
    invitation_in_project,
    invitation_used_by,
    membership_in_project,
    project_open_invitations,
)
from projects.services.invitations import (
    InvitationNotValid,
    invitation_accept,
    invitation_create,
    invitation_mail,
    invitation_revoke,
)
from projects.services.member_add_limits import MemberAddsLimited, membership_add_paced
from projects.services.members import membership_update

# Adding an existing account takes at least this long whether or not one matched, so that
# neither the answer nor its time tells which accounts exist.


def _members_page(request, project, form, *, link="", mailed=None, status=200, add_form=None):
    now = timezone.now()
    context = {
        "add_form": add_form or MemberAddForm(project),
        "leases": project_leases(project),
        "now": now,
        "project": project,
        "members": project_members(project),
        "former": former_members(project),
        "invitations": project_open_invitations(project, now),
        "tasks": list(project.tasks.order_by("slug")),
        "roles": Membership.Role.choices,
        "form": form,
        "link": link,
        "mailed": mailed,
        "sends_mail": mail_configured(),
    }
    return render(request, "annotation/members.html", context, status=status)


@login_required
@never_cache  # the page that shows a new link must not be kept by a browser or proxy
@require_http_methods(["GET", "POST"])
def members_page(request, slug: str):
    """Members and open invitations; a post creates an invitation and shows its link once
    (rendered, never redirected: the raw token must not travel through the session)."""
    project = project_for_lead(request.user, slug)
    form = InvitationForm(project, request.POST or None)
    if request.method != "POST":
        return _members_page(request, project, form)
    if form.is_valid():
        data = form.cleaned_data
        with errors_on_form(form):
            created = invitation_create(
                project=project,
                created_by=request.user,
                role=data["role"],
                tasks=data["tasks"],
                days=data["days"],
                email=data["email"],
                note=data["note"],
            )
            link = request.build_absolute_uri(reverse("invite", args=[created.token]))
            invitation = created.invitation
            mailed = None
            if invitation.email and mail_configured():
                mailed = invitation_mail(invitation=invitation, link=link)
            return _members_page(
                request, project, InvitationForm(project), link=link, mailed=mailed
            )
    return _members_page(request, project, form, status=400)


@login_required
@require_POST
def member_update(request, slug: str, membership_id: int):
    project = project_for_lead(request.user, slug)
    membership = membership_in_project(project, membership_id)
    form = MembershipForm(project, request.POST)
    if not form.is_valid():
        messages.error(
            request,
            _("%(name)s not changed: check the role and tasks.")
            % {"name": membership.user.username},
        )
        return redirect("project-members", slug=slug)
    prefix = _("%(name)s not changed: ") % {"name": membership.user.username}
    with refusal_as_message(request, prefix=prefix):
        membership_update(
            membership=membership,
            role=form.cleaned_data["role"],
            tasks=form.cleaned_data["tasks"],
            project_quota=form.cleaned_data["project_quota"],
            task_quota=form.cleaned_data["task_quota"],
        )
        messages.success(request, _("%(name)s saved.") % {"name": membership.user.username})
    if membership.user_id == request.user.pk and membership.role != Membership.Role.LEAD:
        return redirect("home")  # they no longer lead the project
    return redirect("project-members", slug=slug)


@login_required
@require_POST
def member_deactivate(request, slug: str, membership_id: int):
    project = project_for_lead(request.user, slug)
    membership = membership_in_project(project, membership_id)
    name = membership.user.username
    with refusal_as_message(request, prefix=_("%(name)s not removed: ") % {"name": name}):
        membership_deactivate(membership=membership)
        messages.success(
            request,
            _("%(name)s no longer has access to %(project)s; their ratings stay.")
            % {"name": name, "project": project.name},
        )
        if membership.user_id == request.user.pk:
            return redirect("home")
    return redirect("project-members", slug=slug)


@login_required
@require_POST
def member_add(request, slug: str):
    """Add an existing account by username or e-mail. The answer is the same message after
    the same time whether an account matched or not; attempts are limited per lead."""
    project = project_for_lead(request.user, slug)
    form = MemberAddForm(project, request.POST)
    if not form.is_valid():
        return _members_page(request, project, InvitationForm(project), add_form=form, status=400)
    try:
        with errors_on_form(form):
            membership_add_paced(
                project=project,
                lead_id=request.user.pk,
                identifier=form.cleaned_data["identifier"],
                role=form.cleaned_data["role"],
                tasks=form.cleaned_data["tasks"],
            )
            messages.success(
                request,
                _(
                    "If an account has exactly that username or e-mail and was not a member "
                    "yet, it is now a member of %(project)s. Nothing is sent to them: tell them."
                )
                % {"project": project.name},
            )
            return redirect("project-members", slug=slug)
    except MemberAddsLimited as limited:
        messages.error(request, limited.message)
        return redirect("project-members", slug=slug)
    return _members_page(request, project, InvitationForm(project), add_form=form, status=400)


@login_required
@require_POST
def lease_release(request, slug: str, assignment_id: int):
    """Give an annotator's pair in progress back to the pool (another project's id, or one
    no longer in progress, is a 404)."""
    project = project_for_lead(request.user, slug)
    released = assignment_release(project=project, assignment_id=assignment_id, by=request.user)
    messages.success(
        request,
        _("Pair %(pair)s is back in the pool; %(name)s no longer holds it.")
        % {"pair": released.pair_id, "name": released.annotator.username},
    )
    return redirect("project-members", slug=slug)


@login_required
@require_POST
def invitation_revoke_view(request, slug: str, invitation_id: int):
    project = project_for_lead(request.user, slug)
    invitation = invitation_in_project(project, invitation_id)
    with refusal_as_message(request):
        invitation_revoke(invitation=invitation)
        messages.success(request, _("Invitation revoked: its link no longer works."))
    return redirect("project-members", slug=slug)


def _not_valid(request):
    return render(request, "annotation/invite_invalid.html", status=404)


def _limit_key(token: str) -> str:
    # login_limits hashes it: the cache never holds the token itself.
    return f"invitation:{token}"


def _invitation_refused(request, error: DomainError, token: str):
    """A link that cannot be used: the same 404 page whatever the reason, counted like a
    failed sign-in. A member already: nothing to do, nothing counted."""
    if isinstance(error, InvitationNotValid):
        login_failed(request, _limit_key(token))
        return _not_valid(request)
    messages.info(request, error.message)
    return redirect("home")


@never_cache
@require_http_methods(["GET", "POST"])
@domain_errors_shown_by(_invitation_refused)
def invite(request, token: str):
    """The invitee's page: a new account (username, password twice) or, signed in, a button
    that joins their account. Failed posts count against the link and the client address."""
    posting = request.method == "POST"
    if posting:
        wait = login_refusal(request, _limit_key(token))
        if wait is not None:
            minutes = max(1, math.ceil(wait / 60))
            limited = {"minutes": minutes}
            return render(request, "annotation/invite_limited.html", limited, status=429)
    invitation = invitation_for_token(token, timezone.now())
    if invitation is None:
        joined = invitation_used_by(token, request.user)
        if joined is not None:  # opened again after joining (or joined at an SSO sign-in)
            messages.info(
                request, _("You have joined %(project)s.") % {"project": joined.project.name}
            )
            return redirect("home")
        if posting:
            login_failed(request, _limit_key(token))
        return _not_valid(request)
    project = invitation.project
    signed_in = request.user.is_authenticated
    if not signed_in and not settings.ARBITER_PASSWORD_SIGN_IN:
        # Local passwords are off: no new password account; the invitee signs in through
        # the organisation's provider and joins with that account (config/oidc.py).
        context = {"invitation": invitation, "project": project, "passwords_off": True}
        return render(request, "annotation/invite.html", context, status=403 if posting else 200)
    form = None if signed_in else AcceptForm(request.POST or None)
    if posting:
        membership = None
        if signed_in:
            membership = invitation_accept(token=token, user=request.user)
        elif form is not None and form.is_valid():  # form is None only when signed in
            with errors_on_form(form):
                membership = invitation_accept(
                    token=token,
                    username=form.cleaned_data["username"],
                    password=form.cleaned_data["password1"],
                )
                # The password backend: the account was just made with a password.
                login(request, membership.user, backend=settings.AUTHENTICATION_BACKENDS[0])
        if membership is not None:
            messages.success(
                request,
                _("Welcome to %(project)s (%(role)s).")
                % {"project": project.name, "role": membership.get_role_display().lower()},
            )
            return redirect("home")
        login_failed(request, _limit_key(token))
    member = signed_in and Membership.objects.filter(user=request.user, project=project).exists()
    context = {
        "invitation": invitation,
        "project": project,
        "form": form,
        "member": member,
        "task_names": ", ".join(task.name for task in invitation.tasks.all()),
    }
    return render(request, "annotation/invite.html", context, status=400 if posting else 200)
