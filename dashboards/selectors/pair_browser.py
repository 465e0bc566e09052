"""The pair browser of the leads (`/projects/<p>/pairs/`): every pair of a project, filtered,
searched, sorted and paged; its CSV; the ids a bulk action is about.

The filters come from a query string typed by anyone: `browser_filters_parse` checks every
value (whole numbers through core/whole_numbers.py, choices against the project's own tasks,
annotators and judges) and names each bad field, so a bad value is a form error, never a 500.

Query budget of a page, whatever its size: the count, the page's ids, its rows (task joined,
the open-flag and adjudication marks as EXISTS columns, the prompt, responses and generators
joined), the sizes of the page's images (selectors/pair_previews.py), the project's tasks,
annotators and judges for the form, and the lead's saved views (selectors/saved_views.py):
eight queries (asserted in tests/pair_browser/test_views.py). The "judges
disagree" filter reads its sets of pairs from the precomputed figures (dashboards/snapshots.py
and selectors/judge_disagreement.py), never the verdicts: a fixed handful of queries more.

Search: PostgreSQL full-text search (websearch syntax: words, "a phrase", -word, or; the
`simple` configuration: words as written, no stemming, no stop words) over the stored vector
of `PairSearch.text` and its GIN index (content migration 0005), or an exact external id; on
SQLite a case-insensitive substring of the text.
"""

import json
from array import array
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import BooleanField, Exists, F, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.models import Adjudication, Flag, Rating
from content.models import Pair, PairSearch
from core.whole_numbers import whole_number
from dashboards.selectors.judge_disagreement import ANY_JUDGE, JudgeSets
from dashboards.selectors.pair_previews import PREVIEW_RELATED, pair_previews
from dashboards.snapshots import Figures, figures_for
from judging.models import Judge
from projects.access import project_or_operator_wide
from projects.models import Project
from projects.scale import side_of

PAGE_SIZES = (25, 50, 100, 200)
PAGE_SIZE = 50
MAX_QUERY_CHARS = 200
MAX_RATINGS = 1000  # more ratings than any pair has: a bound for the typed numbers
SORTS = {
    "id": ("id",),
    "ratings": ("rating_count",),
    "span": ("consensus_span",),
    "status": ("status",),
    "created": ("created_at",),
}
SORT_LABELS = {
    "id": gettext_lazy("Id"),
    "ratings": gettext_lazy("Ratings"),
    "span": gettext_lazy("Span"),
    "status": gettext_lazy("Status"),
    "created": gettext_lazy("Created"),
}
SIDES = {
    "A": gettext_lazy("A is better"),
    "B": gettext_lazy("B is better"),
    "tie": gettext_lazy("Tie"),
}
YES_NO = {"yes": True, "no": False}
# The table's optional columns, in their order (the pair's id and its box are always shown).
COLUMNS = {
    "prompt": gettext_lazy("Prompt"),
    "images": gettext_lazy("Images"),
    "generators": gettext_lazy("Generators"),
    "task": gettext_lazy("Task"),
    "status": gettext_lazy("Status"),
    "ratings": gettext_lazy("Ratings"),
    "mean": gettext_lazy("Mean"),
    "span": gettext_lazy("Span"),
    "consensus": gettext_lazy("Consensus"),
    "decided": gettext_lazy("Decided by"),
    "marks": gettext_lazy("Marks"),
    "created": gettext_lazy("Created"),
}
DEFAULT_COLUMNS = tuple(key for key in COLUMNS if key not in ("decided", "created"))
# The query-string fields of the filter (kept across pages, sorts, the CSV, bulk actions and
# saved views). `cols`: the columns shown, comma-separated, absent for the default ones.
FIELDS = (
    "q", "task", "status", "ratings_min", "ratings_max", "side", "span_min", "flagged", "gold",
    "adjudicated", "annotator", "judge", "sort", "order", "size", "cols",
)  # fmt: skip
# The fields "more filters" holds: it opens when one of them is set.
ADVANCED = (
    "ratings_min", "ratings_max", "side", "span_min", "flagged", "gold", "adjudicated",
    "annotator", "judge", "size", "cols",
)  # fmt: skip


@dataclass(frozen=True)
class BrowserFilters:
    """A checked filter: every value known to be valid for the project."""

    q: str = ""
    task_id: int | None = None
    status: str = ""
    ratings_min: int | None = None
    ratings_max: int | None = None
    side: str = ""
    span_min: int | None = None
    flagged: bool | None = None
    gold: bool | None = None
    adjudicated: bool | None = None
    annotator_id: int | None = None
    judge: str = ""  # "", ANY_JUDGE or a judge's id
    sort: str = "id"
    descending: bool = False
    size: int = PAGE_SIZE
    page: int = 1
    columns: tuple[str, ...] = DEFAULT_COLUMNS


@dataclass
class BrowserForm:
    """What the filter form shows: the values as typed, the choices, each field's error."""

    values: dict[str, str]
    tasks: list[Any] = field(default_factory=list)
    annotators: list[Any] = field(default_factory=list)
    judges: list[Any] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def advanced(self) -> bool:
        """A field of "more filters" is set or wrong: the form shows them open."""
        return any(self.values.get(name) for name in ADVANCED) or any(
            name in self.errors for name in ADVANCED
        )

    @property
    def shown_columns(self) -> list[str]:
        return self.values["cols"].split(",") if self.values["cols"] else list(DEFAULT_COLUMNS)


def _columns_value(params: Mapping[str, str]) -> str:
    """The columns asked for, as one comma-separated value: a link's `cols=a,b`, or the form's
    ticked boxes (`cols=a&cols=b`); "" for the default ones."""
    getlist = getattr(params, "getlist", None)
    raw = getlist("cols") if getlist else [params.get("cols", "")]
    keys = [key for value in raw for key in str(value)[:MAX_QUERY_CHARS].split(",") if key]
    unknown = [key for key in keys if key not in COLUMNS]
    if unknown:
        return ",".join(keys)[:MAX_QUERY_CHARS]  # the parser names the bad value
    chosen = tuple(key for key in COLUMNS if key in keys)
    return "" if not chosen or chosen == DEFAULT_COLUMNS else ",".join(chosen)


def browser_form(project: Project, params: Mapping[str, str]) -> BrowserForm:
    """The form's choices (three queries) and the values as typed."""
    values = {name: str(params.get(name, ""))[:MAX_QUERY_CHARS] for name in FIELDS}
    values["cols"] = _columns_value(params)
    return BrowserForm(
        values=values,
        tasks=list(project.tasks.order_by("slug").values_list("pk", "slug", "name")),
        annotators=list(
            get_user_model()
            .objects.filter(memberships__project=project)
            .order_by("username")
            .values_list("pk", "username")
        ),
        judges=list(
            Judge.objects.filter(project_or_operator_wide(project))
            .order_by("name", "pk")
            .values_list("pk", "name")
        ),
    )


def _choice(
    value: str, choices: Container[str], name: str, errors: dict[str, str], message: str
) -> str | None:
    if value and value not in choices:
        errors[name] = message
        return None
    return value or None


def _bounded(
    value: str, name: str, errors: dict[str, str], maximum: int, message: str
) -> int | None:
    if value == "":
        return None
    number = whole_number(value, maximum=maximum)
    if number is None:
        errors[name] = message
    return number


def browser_filters_parse(project: Project, form: BrowserForm, page: str = "") -> BrowserFilters:
    """The checked filter of `form.values`; each bad field gets its message in `form.errors`
    (then the filter is the default one and the caller shows the errors)."""
    v, errors = form.values, form.errors
    task_ids = {str(pk): pk for pk, _slug, _name in form.tasks}
    task_slugs = {slug: pk for pk, slug, _name in form.tasks}
    task_id = task_ids.get(v["task"], task_slugs.get(v["task"]))
    if v["task"] and task_id is None:
        errors["task"] = _("Choose one of the project's tasks.")
    status = _choice(v["status"], Pair.Status.values, "status", errors, _("Choose a status."))
    top = project.annotators_per_pair + MAX_RATINGS
    low = _bounded(v["ratings_min"], "ratings_min", errors, top, _("A whole number of ratings."))
    high = _bounded(v["ratings_max"], "ratings_max", errors, top, _("A whole number of ratings."))
    if low is not None and high is not None and low > high:
        errors["ratings_max"] = _("At least the minimum.")
    span_min = _bounded(
        v["span_min"],
        "span_min",
        errors,
        project.scale_points - 1,
        _("A whole number from 0 to %(top)s.") % {"top": project.scale_points - 1},
    )
    side = _choice(v["side"], SIDES, "side", errors, _("Choose A, B or tie."))
    flags = {}
    for name in ("flagged", "gold", "adjudicated"):
        chosen = _choice(v[name], YES_NO, name, errors, _("Choose yes, no or either."))
        flags[name] = YES_NO[chosen] if chosen else None
    annotators = {str(pk) for pk, _name in form.annotators}
    annotator = _choice(v["annotator"], annotators, "annotator", errors, _("Choose a member."))
    judges = {ANY_JUDGE, *(str(pk) for pk, _name in form.judges)}
    judge = _choice(v["judge"], judges, "judge", errors, _("Choose a judge of the project."))
    sort = v["sort"] or "id"
    if sort not in SORTS:
        errors["sort"] = _("Choose a sort.")
    order = _choice(v["order"], ("asc", "desc"), "order", errors, _("Ascending or descending."))
    size = PAGE_SIZE
    if v["size"]:
        size = whole_number(v["size"]) or 0
        if size not in PAGE_SIZES:
            errors["size"] = _("Choose a page size.")
    columns = tuple(v["cols"].split(",")) if v["cols"] else DEFAULT_COLUMNS
    if any(key not in COLUMNS for key in columns):
        errors["cols"] = _("Choose columns from the list.")
    page_number = whole_number(page) if page else 1
    if not page_number:
        errors["page"] = _("A page is a whole number from 1.")
    if errors:
        return BrowserFilters()
    return BrowserFilters(
        q=" ".join(v["q"].replace("\x00", "").split()),
        task_id=task_id,
        status=status or "",
        ratings_min=low,
        ratings_max=high,
        side=side or "",
        span_min=span_min,
        flagged=flags["flagged"],
        gold=flags["gold"],
        adjudicated=flags["adjudicated"],
        annotator_id=int(annotator) if annotator else None,
        judge=judge or "",
        sort=sort,
        descending=order == "desc",
        size=size,
        page=page_number or 1,
        columns=columns,
    )


def _open_flags() -> Exists:
    return Exists(Flag.objects.filter(pair=OuterRef("pk"), resolved_at__isnull=True))


def _adjudicated() -> Exists:
    return Exists(Adjudication.objects.filter(pair=OuterRef("pk")))


# PostgreSQL's stored vector of the search text (content migration 0005; not a model field, as
# SQLite has no such type), on the pair's joined PairSearch row (browser_pairs is never used as
# a subquery, so the joined table keeps its own name), or the pair of that exact external id.
# Both conditions are on the joined table, so PostgreSQL ORs its GIN and primary-key indexes
# (a condition on the pairs' table in the OR would make it test every pair).
_MATCHES = (
    "content_pairsearch.search_vector @@ websearch_to_tsquery('simple'::regconfig, %s)"
    " OR content_pairsearch.pair_id = (SELECT id FROM annotation_pair"
    " WHERE project_id = %s AND external_id = %s)"
)


def _search(pairs: QuerySet[Pair], project_id: int, text: str) -> QuerySet[Pair]:
    """The pairs whose search text matches (content.PairSearch), or whose external id is the
    text."""
    if connection.vendor == "postgresql":
        joined = pairs.filter(search__isnull=False)  # the INNER JOIN _MATCHES reads
        condition = RawSQL(_MATCHES, (text, project_id, text), output_field=BooleanField())
        return joined.filter(condition)
    found = PairSearch.objects.filter(text__icontains=text).values("pair_id")
    return pairs.filter(Q(pk__in=found) | Q(external_id=text))


def judges_disagreement_now(project: Project) -> Figures[JudgeSets]:
    """The judges' disagreement sets (selectors/judge_disagreement.py) as precomputed: current,
    or, while a refresh runs behind, the last ones with the time they were computed."""
    return figures_for(project, "disagreement", wait_for_first=False)


def _among(ids: "array[int]") -> Q:
    """The pair's id is one of `ids`, passed as one parameter (not an IN list of tens of
    thousands of values)."""
    param: list[int] | str
    if connection.vendor == "postgresql":
        sql, param = "annotation_pair.id = ANY(%s)", list(ids)
    else:
        sql = "annotation_pair.id IN (SELECT value FROM json_each(%s))"
        param = json.dumps(list(ids))
    return Q(RawSQL(sql, (param,), output_field=BooleanField()))


def browser_pairs(
    project: Project, filters: BrowserFilters, disagreement: Figures[JudgeSets] | None = None
) -> QuerySet[Pair]:
    """The project's pairs that pass `filters`, in its order (id last, for a stable page).
    `disagreement`: the judges' sets when the caller has read them already."""
    pairs = Pair.objects.filter(project=project)
    f = filters
    if f.q:
        pairs = _search(pairs, project.pk, f.q)
    if f.task_id is not None:
        pairs = pairs.filter(task_id=f.task_id)
    if f.status:
        pairs = pairs.filter(status=f.status)
    if f.ratings_min is not None:
        pairs = pairs.filter(rating_count__gte=f.ratings_min)
    if f.ratings_max is not None:
        pairs = pairs.filter(rating_count__lte=f.ratings_max)
    if f.side:
        center = project.center
        by_side = {
            "A": Q(consensus_mean__gt=center),
            "B": Q(consensus_mean__lt=center),
            "tie": Q(consensus_mean=center),
        }
        pairs = pairs.filter(by_side[f.side])
    if f.span_min is not None:
        pairs = pairs.filter(consensus_span__gte=f.span_min)
    if f.flagged is not None:
        pairs = pairs.filter(_open_flags() if f.flagged else ~_open_flags())
    if f.gold is not None:
        gold = Q(status=Pair.Status.GOLD)
        pairs = pairs.filter(gold if f.gold else ~gold)
    if f.adjudicated is not None:
        pairs = pairs.filter(_adjudicated() if f.adjudicated else ~_adjudicated())
    if f.annotator_id is not None:
        rated = Rating.objects.filter(pair=OuterRef("pk"), annotator_id=f.annotator_id)
        pairs = pairs.filter(Exists(rated))
    if f.judge:
        sets = (disagreement or judges_disagreement_now(project)).figures
        # A judge made since the sets were computed has no verdicts in them yet.
        pairs = pairs.filter(_among(sets.pairs.get(f.judge, array("q")) if sets else array("q")))
    (column,) = SORTS[f.sort]
    ordering = F(column).desc(nulls_last=True) if f.descending else F(column).asc(nulls_last=True)
    tiebreak = "-id" if f.descending else "id"
    return pairs.order_by(ordering, tiebreak)


def _side(mean: float | None, center: float) -> str:
    """The side the ratings' mean prefers: A, B, tie, or "" without ratings."""
    if mean is None:
        return ""
    return side_of(mean, center) or "tie"


@dataclass
class BrowserPage:
    rows: list[Any]
    total: int
    page: int
    pages: int
    # Set when the "judges disagree" filter used sets computed before the latest data change
    # (a refresh runs behind): when they were computed.
    judges_as_of: datetime | None = None


def browser_page(project: Project, filters: BrowserFilters) -> BrowserPage:
    """One page of `browser_pairs` (four queries whatever the page size: the count, the ids,
    the rows with their prompts, responses and generators joined, the images' sizes; and the
    precomputed judges' sets when that filter is on; past the last page, the last). The
    page's ids are found first, then only those rows are read with their marks: an offset
    deep into the table skips bare ids, not rows with their EXISTS columns."""
    disagreement = judges_disagreement_now(project) if filters.judge else None
    pairs = browser_pairs(project, filters, disagreement)
    total = pairs.count()
    pages = max(1, -(-total // filters.size))
    page = min(filters.page, pages)
    start = (page - 1) * filters.size
    ids = list(pairs.values_list("pk", flat=True)[start : start + filters.size])
    found = (
        Pair.objects.filter(pk__in=ids)
        .select_related("task", *PREVIEW_RELATED)
        .annotate(flagged=_open_flags(), adjudicated=_adjudicated())
    )
    by_id = {pair.pk: pair for pair in found}
    rows: list[Any] = [by_id[pk] for pk in ids if pk in by_id]
    for pair in rows:
        pair.side = _side(pair.consensus_mean, project.center)
    pair_previews(rows)
    as_of = None
    if disagreement is not None and not disagreement.current:
        as_of = disagreement.computed_at
    return BrowserPage(rows=rows, total=total, page=page, pages=pages, judges_as_of=as_of)


CSV_HEADER = [
    "pair_id", "external_id", "task", "status", "ratings", "ratings_needed", "consensus_mean",
    "consensus_span", "label", "decided_by", "open_flags", "gold", "adjudicated", "source",
    "created_at",
]  # fmt: skip


def browser_csv_rows(project: Project, filters: BrowserFilters) -> Iterator[list[Any]]:
    """Every pair of the filtered view as CSV rows, read in chunks (for a streamed answer)."""
    rows = (
        browser_pairs(project, filters)
        .annotate(flagged=_open_flags(), adjudicated=_adjudicated())
        .values_list(
            "pk",
            "external_id",
            "task__slug",
            "status",
            "rating_count",
            "extra_annotators",
            "consensus_mean",
            "consensus_span",
            "label",
            "decided_by",
            "flagged",
            "adjudicated",
            "source",
            "created_at",
        )  # fmt: skip
    )
    n = project.annotators_per_pair
    for (pk, external_id, task, status, count, extra, mean, span, label, decided, flagged,
         adjudicated, source, created) in rows.iterator(chunk_size=2000):  # fmt: skip
        yield [
            pk, external_id, task, status, count, n + extra,
            "" if mean is None else f"{mean:.3f}", span, label, decided, int(flagged),
            int(status == Pair.Status.GOLD), int(adjudicated), source, created.isoformat(),
        ]  # fmt: skip


def browser_pair_ids(project: Project, filters: BrowserFilters) -> list[int]:
    """The ids of every pair the filter matches (a bulk action on "all N matching")."""
    return list(browser_pairs(project, filters).values_list("pk", flat=True))
