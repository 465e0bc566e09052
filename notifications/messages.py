"""A notification's sentence and the page it points to, composed from its kind and its data
when it is shown (the list page, the e-mail). Plain text: the templates escape it, the
e-mail is text only. A key missing from `data` gives a vaguer sentence, never an error."""

from typing import Any

from django.urls import NoReverseMatch, reverse

from notifications.models import NotificationKind as Kind


def about_self(kind: str, data: dict[str, Any], user_id: int) -> bool:
    """Whether the event is the recipient's own (their pause): it then speaks to them."""
    return kind == Kind.ANNOTATOR_PAUSED and data.get("annotator") == user_id


def notification_text(kind: str, data: dict[str, Any], *, about_recipient: bool = False) -> str:
    """One sentence; `about_recipient` when the event is the recipient's own (their pause)."""
    task = f" in task {data['task']}" if data.get("task") else ""
    pair = f"pair {data['pair']}" if data.get("pair") else "a pair"
    if kind == Kind.QUESTION_ASKED:
        return f"An annotator asked a question about {pair}{task}."
    if kind == Kind.QUESTION_ANSWERED:
        return f"A lead answered your question about {pair}{task}."
    if kind == Kind.FLAG_RAISED:
        reason = f": {data['reason']}" if data.get("reason") else ""
        by = f"{data['by']} flagged" if data.get("by") else "An annotator flagged"
        return f"{by} {pair}{task}{reason}."
    if kind == Kind.IMPORT_FINISHED:
        pairs = data.get("pairs")
        written = f": {pairs} pair{'' if pairs == 1 else 's'} written" if pairs is not None else ""
        return f"The import of {_file(data)}{task} finished{written}."
    if kind == Kind.IMPORT_FAILED:
        return f"The import of {_file(data)}{task} failed{_error(data)}."
    if kind == Kind.RUN_FINISHED:
        failed = data.get("failed") or 0
        errors = f", {failed} of {data.get('trials')} trials failed" if failed else ""
        return (
            f"Judge run #{data.get('run')} ({data.get('judge', 'a judge')}){task} finished{errors}."
        )
    if kind == Kind.RUN_FAILED:
        return (
            f"Judge run #{data.get('run')} ({_judge(data)}){task} failed: "
            "every trial ended in an error."
        )
    if kind == Kind.EXPORT_READY:
        pairs = data.get("pairs")
        counted = f" ({pairs} pair{'' if pairs == 1 else 's'})" if pairs is not None else ""
        return f"Export #{data.get('job')}{counted} is ready to download."
    if kind == Kind.EXPORT_FAILED:
        return f"Export #{data.get('job')} failed{_error(data)}."
    if kind == Kind.ANNOTATOR_PAUSED:
        if about_recipient:
            return (
                f"You are paused{task}: too few of your gold checks were right. "
                "A lead can let you back in."
            )
        return f"{data.get('username', 'An annotator')} was paused{task} by the gold checks."
    return "Something happened in the project."


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
    return f"“{data['file']}”" if data.get("file") else "a file"


def _error(data: dict[str, Any]) -> str:
    return f": {data['error']}" if data.get("error") else ""


def _judge(data: dict[str, Any]) -> str:
    return str(data.get("judge") or "a judge")
