"""A notification's sentence and the page it points to, composed from its kind and its data
when it is shown (the list page, the e-mail). Plain text: the templates escape it, the
e-mail is text only. A key missing from `data` gives a vaguer sentence, never an error. A
pair is named by its task's name and its prompt's first words, which the caller adds to
`data` (`task_name`, `prompt`: notifications.selectors.pair_names)."""

from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from notifications.models import NotificationKind as Kind


def about_self(kind: str, data: dict[str, Any], user_id: int) -> bool:
    """Whether the event is the recipient's own (their pause): it then speaks to them."""
    return kind == Kind.ANNOTATOR_PAUSED and data.get("annotator") == user_id


def notification_text(kind: str, data: dict[str, Any], *, about_recipient: bool = False) -> str:
    """One sentence, in the active language; `about_recipient` when the event is the
    recipient's own (their pause). Optional parts (the task, a count) are phrases of their
    own, each translated whole."""
    task = data.get("task_name") or data.get("task")
    values = {
        "task": _(" in task %(task)s") % {"task": task} if task else "",
        # A pair by what the reader saw (its prompt's first words, from
        # selectors.pair_names), never by its internal id.
        "pair": _("the pair “%(prompt)s”") % {"prompt": data["prompt"]}
        if data.get("prompt")
        else _("a pair"),
        "file": _file(data),
        "run": data.get("run"),
        "job": data.get("job"),
    }
    if kind == Kind.QUESTION_ASKED:
        return _("An annotator asked a question about %(pair)s%(task)s.") % values
    if kind == Kind.QUESTION_ANSWERED:
        return _("A lead answered your question about %(pair)s%(task)s.") % values
    if kind == Kind.FLAG_RAISED:
        values.update(by=data.get("by"), reason=data.get("reason"))
        if data.get("by") and data.get("reason"):
            return _("%(by)s flagged %(pair)s%(task)s: %(reason)s.") % values
        if data.get("by"):
            return _("%(by)s flagged %(pair)s%(task)s.") % values
        if data.get("reason"):
            return _("An annotator flagged %(pair)s%(task)s: %(reason)s.") % values
        return _("An annotator flagged %(pair)s%(task)s.") % values
    if kind == Kind.IMPORT_FINISHED:
        pairs = data.get("pairs")
        if pairs is None:
            return _("The import of %(file)s%(task)s finished.") % values
        values["count"] = pairs
        return (
            ngettext(
                "The import of %(file)s%(task)s finished: %(count)s pair written.",
                "The import of %(file)s%(task)s finished: %(count)s pairs written.",
                pairs if isinstance(pairs, int) else 2,
            )
            % values
        )
    if kind == Kind.IMPORT_FAILED:
        if data.get("error"):
            values["error"] = data["error"]
            return _("The import of %(file)s%(task)s failed: %(error)s.") % values
        return _("The import of %(file)s%(task)s failed.") % values
    if kind == Kind.RUN_FINISHED:
        failed = data.get("failed") or 0
        values.update(judge=data.get("judge") or _("a judge"), failed=failed)
        if not failed:
            return _("Judge run #%(run)s (%(judge)s)%(task)s finished.") % values
        values["trials"] = data.get("trials")
        return (
            _(
                "Judge run #%(run)s (%(judge)s)%(task)s finished, "
                "%(failed)s of %(trials)s trials failed."
            )
            % values
        )
    if kind == Kind.RUN_FAILED:
        values["judge"] = _judge(data)
        return (
            _("Judge run #%(run)s (%(judge)s)%(task)s failed: every trial ended in an error.")
            % values
        )
    if kind == Kind.EXPORT_READY:
        pairs = data.get("pairs")
        if pairs is None:
            return _("Export #%(job)s is ready to download.") % values
        values["count"] = pairs
        return (
            ngettext(
                "Export #%(job)s (%(count)s pair) is ready to download.",
                "Export #%(job)s (%(count)s pairs) is ready to download.",
                pairs if isinstance(pairs, int) else 2,
            )
            % values
        )
    if kind == Kind.EXPORT_FAILED:
        if data.get("error"):
            values["error"] = data["error"]
            return _("Export #%(job)s failed: %(error)s.") % values
        return _("Export #%(job)s failed.") % values
    if kind == Kind.ANNOTATOR_PAUSED:
        if about_recipient:
            return (
                _(
                    "You are paused%(task)s: too few of your gold checks were right. "
                    "A lead can let you back in."
                )
                % values
            )
        values["name"] = data.get("username") or _("An annotator")
        return _("%(name)s was paused%(task)s by the gold checks.") % values
    return _("Something happened in the project.")


def notification_link(
    kind: str, data: dict[str, Any], project_slug: str, *, about_recipient: bool = False
) -> str:
    """The path of the page where the recipient sees or acts on it."""
    slug = project_slug
    try:
        if kind == Kind.QUESTION_ANSWERED and data.get("assignment"):
            return reverse("annotate", args=[int(data["assignment"])])  # where they asked
        if kind in (Kind.QUESTION_ASKED, Kind.FLAG_RAISED) and data.get("pair"):
            return reverse("dash-pair", args=[slug, int(data["pair"])])
        if kind in (Kind.IMPORT_FINISHED, Kind.IMPORT_FAILED):
            return reverse("project-data", args=[slug])
        if kind in (Kind.RUN_FINISHED, Kind.RUN_FAILED) and data.get("run"):
            return reverse("run-detail", args=[slug, int(data["run"])])
        if kind in (Kind.EXPORT_READY, Kind.EXPORT_FAILED):
            return reverse("dash-exports", args=[slug])
        if kind == Kind.ANNOTATOR_PAUSED and not about_recipient:
            return reverse("dash-agreement", args=[slug]) + (
                f"#quality-{data['task']}" if data.get("task") else ""
            )
        if kind in (Kind.QUESTION_ASKED, Kind.FLAG_RAISED):
            return reverse("dash-overview", args=[slug])
    except (NoReverseMatch, TypeError, ValueError):
        pass
    return reverse("home")


def _file(data: dict[str, Any]) -> str:
    return _("“%(file)s”") % {"file": data["file"]} if data.get("file") else _("a file")


def _judge(data: dict[str, Any]) -> str:
    return str(data.get("judge") or _("a judge"))
