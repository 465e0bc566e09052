"""The disagreement queue and the un-blinded pair page of the leads.

The queue is worked through as a queue: its filter (`QueueFilter`: task, reason, and which
pairs, undecided ones by default) travels in the query string from the queue page to each pair
and to its decision, and after a decision the next pair of the same filter opens
(`queue_following`).
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
    Window,
)
from django.db.models.functions import Abs, FirstValue, Lag, Lead, RowNumber
from django.http import QueryDict
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.gold.models import GOLD_FROM_STATUSES
from annotation.models import Adjudication, Flag, Rating
from annotation.selectors.assets import assets_by_sha
from content.lifecycle import ambiguous, ambiguous_q, too_spread, too_spread_q
from content.models import Pair
from content.rendering import content_parts, image_shas
from core.errors import Invalid
from dashboards.selectors.pair_previews import PREVIEW_RELATED, pair_previews
from judging.models import Verdict
from projects.models import Project
from projects.scale import scale_labels, side_of, to_form

if TYPE_CHECKING:  # the stubs' type of a lazy translation; not installed at run time
    from django_stubs_ext import StrOrPromise

REASONS = {
    "span": gettext_lazy("span at or above the limit"),
    "ambiguous": gettext_lazy("mean in or next to the ambiguous band"),
    "flagged": gettext_lazy("flagged by an annotator"),
}
UNDECIDED, WAITING, DECIDED, ALL = "undecided", "waiting", "decided", "all"
# Which pairs of the queue are shown; the first is the default.
STATES = {
    UNDECIDED: gettext_lazy("Undecided"),
    WAITING: gettext_lazy("Waiting for the rating a lead asked for"),
    DECIDED: gettext_lazy("Decided by a lead"),
    ALL: gettext_lazy("All"),
}
PAGE_SIZE = 50


class QueueFilterInvalid(Invalid):
    """A queue filter in a query string that names no task, reason or state (400)."""


@dataclass(frozen=True)
class QueueFilter:
    """The part of the disagreement queue a lead works through. `from_queue`: the pair page
    was opened from the queue, so a decision moves on to the next pair of this filter."""

    task_slug: str = ""
    reason: str = ""
    state: str = UNDECIDED
    from_queue: bool = False

    def _pairs(self) -> list[tuple[str, str]]:
        pairs = [("task", self.task_slug), ("reason", self.reason)]
        return [(k, v) for k, v in pairs if v] + (
            [("state", self.state)] * (self.state != UNDECIDED)
        )

    @property
    def list_query(self) -> str:
        """The query string of the queue page showing this filter ("" for the default)."""
        return urlencode(self._pairs())

    @property
    def pair_query(self) -> str:
        """The query string of a pair page opened from the queue with this filter."""
        return urlencode([("from", "queue"), *self._pairs()])

    @property
    def query(self) -> str:
        """The query string that carries this filter on (the pair page's links, its forms)."""
        return self.pair_query if self.from_queue else self.list_query

    @property
    def state_label(self) -> "StrOrPromise":
        return STATES[self.state]


def _one(params: QueryDict, name: str) -> str:
    values = params.getlist(name)
    if len(values) > 1:
        raise QueueFilterInvalid(
            _("Give %(name)s once, not %(count)s times.") % {"name": name, "count": len(values)}
        )
    return values[0] if values else ""


def queue_filter_parse(project: Project, params: QueryDict) -> QueueFilter:
    """The queue filter in a query string (a QueryDict): `task` a task of the project, `reason`
    one of REASONS, `state` one of STATES (empty: the default), `from` empty or "queue", each
    at most once; anything else raises QueueFilterInvalid naming it. Other names are left to
    the page (page, format, table)."""
    task_slug, reason, state = _one(params, "task"), _one(params, "reason"), _one(params, "state")
    origin = _one(params, "from")
    if reason and reason not in REASONS:
        raise QueueFilterInvalid(_("No such reason: %(value)r.") % {"value": reason[:64]})
    if state and state not in STATES:
        raise QueueFilterInvalid(_("No such choice of pairs: %(value)r.") % {"value": state[:64]})
    if origin not in ("", "queue"):
        raise QueueFilterInvalid(_("Unknown origin: %(value)r.") % {"value": origin[:64]})
    if task_slug and not project.tasks.filter(slug=task_slug[:200]).exists():
        raise QueueFilterInvalid(
            _("No task %(value)r in this project.") % {"value": task_slug[:64]}
        )
    return QueueFilter(task_slug, reason, state or UNDECIDED, origin == "queue")


def _state_condition(project: Project, state: str) -> Q | None:
    """Pairs of the state among the queue's (None: all of them). Waiting: a lead asked for one
    more annotator and the rating is not in yet; undecided: neither decided nor waiting."""
    decided = Q(decided_by=Pair.DecidedBy.ADJUDICATION)
    waiting = ~decided & Q(
        extra_annotators__gt=0,
        rating_count__lt=F("extra_annotators") + project.annotators_per_pair,
    )
    return {UNDECIDED: ~decided & ~waiting, WAITING: waiting, DECIDED: decided}.get(state)


def _queue(
    project: Project, task_slug: str = "", reason: str = "", state: str = ALL
) -> QuerySet[Pair]:
    """Complete pairs the rules drop or nearly drop, flagged pairs and the pairs a lead decided,
    most contested first (widest span, then mean closest to the centre), of `state`."""
    open_flags = Flag.objects.filter(pair=OuterRef("pk"), resolved_at__isnull=True)
    pairs = Pair.objects.filter(project=project).annotate(
        flagged=Exists(open_flags),
        distance=Abs(F("consensus_mean") - project.center),
    )
    # A gold check is never decided, so it is never a disagreement (flagged, it is listed).
    complete = Q(rating_count__gte=project.annotators_per_pair) & ~Q(status=Pair.Status.GOLD)
    by_span = complete & too_spread_q(project, nearly=True)
    by_mean = complete & ambiguous_q(project, nearly=True)
    chosen = {"span": by_span, "ambiguous": by_mean, "flagged": Q(flagged=True)}
    # A decision resolves the pair's flags: a decided pair stays listed (as decided) anyway.
    decided = Q(decided_by=Pair.DecidedBy.ADJUDICATION)
    condition = chosen.get(reason) or (by_span | by_mean | Q(flagged=True) | decided)
    pairs = pairs.filter(condition)
    if task_slug:
        pairs = pairs.filter(task__slug=task_slug)
    in_state = _state_condition(project, state)
    if in_state is not None:
        pairs = pairs.filter(in_state)
    return pairs.order_by(
        F("consensus_span").desc(nulls_last=True), F("distance").asc(nulls_last=True), "id"
    )


def disagreements(
    project: Project,
    *,
    task_slug: str = "",
    reason: str = "",
    state: str = UNDECIDED,
    page: int = 1,
) -> dict[str, Any]:
    """One page of the disagreement queue (_queue), each pair with its reasons and its preview
    (prompt, images, generators: selectors/pair_previews.py). Four queries (the tasks, the
    count, the page, its images' sizes) whatever the page size."""
    pairs = _queue(project, task_slug, reason, state).select_related("task", *PREVIEW_RELATED)
    total = pairs.count()
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(1, page), pages)  # past the last page: the last (no offset past the table)
    # Pair rows given the page's attributes (reasons, preview).
    rows: list[Any] = list(pairs[(page - 1) * PAGE_SIZE : page * PAGE_SIZE])
    for pair in rows:
        pair.reasons = [
            text
            for key, text in REASONS.items()
            if (key == "flagged" and pair.flagged)
            or (
                key == "span"
                and pair.consensus_span is not None
                and pair.rating_count >= project.annotators_per_pair
                and too_spread(pair.consensus_span, project, nearly=True)
            )
            or (
                key == "ambiguous"
                and pair.consensus_mean is not None
                and pair.rating_count >= project.annotators_per_pair
                and ambiguous(pair.consensus_mean, project, nearly=True)
            )
        ]
    pair_previews(rows)
    queue = QueueFilter(task_slug, reason, state)
    return {
        "pairs": rows,
        "total": total,
        "page": page,
        "pages": pages,
        "reasons": REASONS,
        "states": STATES,
        "tasks": list(project.tasks.order_by("slug")),
        "task_slug": task_slug,
        "reason": reason,
        "state": state,
        "queue": queue,
    }


def _queue_rows(project: Project, task_slug: str, reason: str, state: str) -> list[tuple[int, Any]]:
    """(id, of the state?) of every pair of the queue, whatever its state, in the queue's
    order: a pair keeps its place when a decision moves it from one state to another. One
    query."""
    condition = _state_condition(project, state)
    chosen = Value(True) if condition is None else condition
    rows = _queue(project, task_slug, reason).annotate(
        chosen=ExpressionWrapper(chosen, output_field=BooleanField())
    )
    return list(rows.values_list("id", "chosen"))


def queue_neighbours(
    project: Project, pair_id: int, task_slug: str = "", reason: str = "", state: str = UNDECIDED
) -> dict[str, Any]:
    """The pairs of `state` before and after this one in the disagreement queue (same
    filters), and its place among them (None when the pair is not one of them; then `next` is
    the first after where it stands, or the first of all).

    One query that returns one row: the database numbers the state's pairs in the queue's
    order and keeps this pair's row (a window over the queue, filtered in an outer query), so
    a queue of 30,000 pairs is not read into Python to find two ids. Only a pair outside the
    state (opened from elsewhere) reads the queue's ids (`_queue_rows`)."""
    order = [
        F("consensus_span").desc(nulls_last=True),
        F("distance").asc(nulls_last=True),
        F("id").asc(),
    ]
    placed = (
        _queue(project, task_slug, reason, state)
        .order_by()
        .annotate(
            previous=Window(Lag("id"), order_by=order),
            following=Window(Lead("id"), order_by=order),
            position=Window(RowNumber(), order_by=order),
            of=Window(Count("*")),
            this_pair=Window(FirstValue("id"), partition_by=[F("id")]),
        )
        .filter(this_pair=pair_id)  # on a window: Django filters in an outer query
        .values_list("previous", "following", "position", "of")
    )
    for previous, following, position, of in placed:
        return {"previous": previous, "next": following, "position": position, "of": of}
    rows = _queue_rows(project, task_slug, reason, state)
    ids = [pk for pk, chosen in rows if chosen]
    at = next((i for i, (pk, _chosen) in enumerate(rows) if pk == pair_id), None)
    before = [pk for pk, chosen in rows[:at] if chosen] if at is not None else []
    after = [pk for pk, chosen in rows[at + 1 :] if chosen] if at is not None else ids
    return {
        "previous": before[-1] if before else None,
        "next": after[0] if after else None,
        "position": None,
        "of": len(ids),
    }


def queue_following(project: Project, pair_id: int, queue: QueueFilter) -> int | None:
    """The pair to open after this one was decided: the next of the filter's state in the
    queue's order, else the first (pairs the lead passed over), never this one; None when no
    other is left."""
    rows = _queue_rows(project, queue.task_slug, queue.reason, queue.state)
    ids = [pk for pk, chosen in rows if chosen and pk != pair_id]
    at = next((i for i, (pk, _chosen) in enumerate(rows) if pk == pair_id), None)
    after = [pk for pk, chosen in rows[at + 1 :] if chosen] if at is not None else []
    return after[0] if after else (ids[0] if ids else None)


def _as_seen(
    rating: Any, labels: dict[int, Any], aspect_labels: dict[str, Any], center: float
) -> None:
    """What the annotator pressed, on the form they saw (Left/Right), beside the canonical,
    and the side the rating prefers ("=" for none)."""
    side = side_of(rating.overall, center)
    rating.side = side if side in ("A", "B") else "="
    swapped = rating.assignment.swapped if rating.assignment_id else False
    pressed = to_form(rating.overall, rating.scale, swapped)
    rating.pressed = pressed
    label = labels.get(pressed, "")  # the scale's words, in the page's language
    rating.pressed_label = _(label) if label else ""  # (gettext("") is the catalog's header)
    rating.left, rating.right = ("B", "A") if swapped else ("A", "B")
    rating.aspects_seen = [
        {
            "label": aspect_labels.get(score.aspect, score.aspect),
            "canonical": score.score,
            "pressed": to_form(score.score, rating.scale, swapped),
        }
        for score in rating.aspect_scores.all()
    ]


def pair_review(project: Project, pair_id: int) -> dict[str, Any] | None:
    """Everything about one pair, un-blinded, for its leads."""
    pair = (
        Pair.objects.filter(project=project, pk=pair_id)
        .select_related("task", "prompt", "response_a__generator", "response_b__generator")
        .first()
    )
    if pair is None:
        return None
    shas = image_shas(pair.prompt.content, pair.response_a.content, pair.response_b.content)
    assets = assets_by_sha(shas)
    ratings = list(
        Rating.objects.filter(pair=pair)
        .select_related("annotator", "assignment")
        .prefetch_related("aspect_scores")
        .order_by("created_at", "id")
    )
    labels = dict(scale_labels(project.scale_points))
    aspect_labels = {a["key"]: a.get("label", a["key"]) for a in pair.task.aspects}
    for rating in ratings:
        _as_seen(rating, labels, aspect_labels, project.center)
    return {
        "pair": pair,
        "prompt_parts": content_parts(pair.prompt.content, assets),
        "a_parts": content_parts(pair.response_a.content, assets),
        "b_parts": content_parts(pair.response_b.content, assets),
        "ratings": ratings,
        "gold_possible": pair.status in GOLD_FROM_STATUSES and not ratings,
        "verdicts": list(
            Verdict.objects.filter(pair=pair)
            .select_related("judge")
            .order_by("judge__name", "order", "sample")
        ),
        "adjudications": list(Adjudication.objects.filter(pair=pair).select_related("lead")),
        "requests": list(pair.annotator_requests.select_related("lead")),
        "flags": list(Flag.objects.filter(pair=pair).select_related("reported_by")),
        "decisions": Adjudication.Decision.choices,
    }
