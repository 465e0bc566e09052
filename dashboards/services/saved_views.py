"""Saved views of the pair browser: a lead names the current filter, sort and columns, keeps
it private or shares it with the project's leads, and deletes their own.

The query string comes from a form anyone may post: it is parsed like the page's own
(`browser_filters_parse`), refused when a value is wrong, and stored re-encoded from the
checked fields only, so a saved view never carries raw input into a link. A lead keeps at
most MAX_VIEWS_PER_LEAD views per project: the count and the insert run under a lock of the
lead's user row, so two saves at once cannot pass the bound together. Saving under a name the
lead already uses replaces that view."""

from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.http import QueryDict
from django.utils.translation import gettext as _

from core.errors import Invalid, NotFound
from dashboards.models import SavedView
from dashboards.selectors.pair_browser import (
    FIELDS,
    MAX_QUERY_CHARS,
    browser_filters_parse,
    browser_form,
)
from projects.models import Project

MAX_VIEWS_PER_LEAD = 30
NAME_CHARS = 80  # SavedView.name


class SavedViewInvalid(Invalid):
    """A saved view's name or filter is wrong, or the lead has too many views (400)."""


class SavedViewNotFound(NotFound):
    """No such view of this lead in this project: missing, another's, another project's."""


def _canonical_query(project: Project, query: str) -> str:
    params = QueryDict(query[: MAX_QUERY_CHARS * len(FIELDS)])
    form = browser_form(project, params)
    browser_filters_parse(project, form)
    if form.errors:
        raise SavedViewInvalid(_("The filter is not valid: correct it before saving it."))
    return urlencode({name: value for name, value in form.values.items() if value})


def saved_view_save(
    *, project: Project, lead: User, name: str, shared: bool, query: str
) -> SavedView:
    """Save the view under `name` (replacing the lead's view of that name). `lead` must lead
    `project` (the caller checked it)."""
    name = " ".join(name.split())
    if not name:
        raise SavedViewInvalid(_("Give the view a name."), {"name": [_("Give the view a name.")]})
    if len(name) > NAME_CHARS:
        message = _("A name of at most %(count)s characters.") % {"count": NAME_CHARS}
        raise SavedViewInvalid(message, {"name": [message]})
    canonical = _canonical_query(project, query)
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=lead.pk).first()
        existing = SavedView.objects.filter(project=project, owner=lead, name=name).first()
        if existing is not None:
            existing.query, existing.shared = canonical, shared
            existing.save(update_fields=["query", "shared", "updated_at"])
            return existing
        if SavedView.objects.filter(project=project, owner=lead).count() >= MAX_VIEWS_PER_LEAD:
            raise SavedViewInvalid(
                _("You have %(count)s saved views in this project, the most there may be: "
                  "delete one first.") % {"count": MAX_VIEWS_PER_LEAD}
            )  # fmt: skip
        return SavedView.objects.create(
            project=project, owner=lead, name=name, shared=shared, query=canonical
        )


def saved_view_delete(*, project: Project, lead: User, view_id: int) -> str:
    """Delete the lead's own view of `project`; its name. Another lead's view, shared or not,
    and another project's answer like a missing one."""
    view = SavedView.objects.filter(project=project, owner=lead, pk=view_id).first()
    if view is None:
        raise SavedViewNotFound(_("No such saved view."))
    view.delete()
    return view.name
