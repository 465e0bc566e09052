"""Every dashboard table as rows for a CSV download (`?format=csv&table=<name>` on its page).
Each function takes the figures the page's selector returned, so the file holds exactly the
numbers on the screen (unrounded)."""

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy

if TYPE_CHECKING:  # the stubs' type of a lazy translation; not installed at run time
    from django_stubs_ext import StrOrPromise

Table = tuple[list[str], list[list[Any]]]
# What a page shows: its selector's figures by name (dashboards/views figures_context).
Figures = Mapping[str, Any]


def _interval(value: tuple[float, float] | None) -> list[object]:
    return [value[0], value[1]] if value else ["", ""]


def _overview_statuses(f: Figures) -> Table:
    header = ["task", *f["statuses"], "total"]
    rows = [[r["task"].slug, *r["statuses"], r["total"]] for r in f["by_task"]]
    return header, rows


def _overview_throughput(f: Figures) -> Table:
    return ["annotator", "today", "this_week"], [
        [r["annotator"], r["today"], r["week"]] for r in f["throughput"]
    ]


def _overview_runs(f: Figures) -> Table:
    header = ["run", "judge", "task", "status", "answered", "ties", "invalid", "failed", "trials"]
    rows = [
        [
            run.pk,
            run.judge.name,
            run.task.slug if run.task else "",
            run.status,
            run.answered,
            run.ties,
            run.invalid,
            run.failed,
            run.trials,
        ]
        for run in f["runs"]
    ]
    return header, rows


def _agreement_tasks(f: Figures) -> Table:
    header = [
        "task", "aspect", "ratings", "alpha_ordinal", "alpha_ordinal_low", "alpha_ordinal_high",
        "alpha_interval", "alpha_interval_low", "alpha_interval_high",
    ]  # fmt: skip
    rows: list[list[Any]] = []
    for t in f["tasks"]:
        for aspect, figures in [("overall", t), *((a["key"], a) for a in t["aspects"])]:
            alpha = figures["alpha"] if aspect == "overall" else figures
            rows.append(
                [
                    t["task"].slug,
                    aspect,
                    figures["ratings"],
                    alpha["ordinal"]["value"],
                    *_interval(alpha["ordinal"]["interval"]),
                    alpha["interval"]["value"],
                    *_interval(alpha["interval"]["interval"]),
                ]
            )
    return header, rows


def _agreement_annotators(f: Figures) -> Table:
    keys = [
        "ratings", "median_active_seconds", "label_agreement", "labelled", "loo_agreement",
        "compared", "left_bias", "decisive",
    ]  # fmt: skip
    return ["annotator", *keys], [[a["name"], *(a[k] for k in keys)] for a in f["annotators"]]


def _disagreements(f: Figures) -> Table:
    header = ["pair", "task", "status", "ratings", "mean", "span", "reasons", "decided_by"]
    rows = [
        [
            p.external_id,
            p.task.slug,
            p.status,
            p.rating_count,
            p.consensus_mean,
            p.consensus_span,
            "; ".join(str(reason) for reason in p.reasons),
            p.decided_by,
        ]
        for p in f["pairs"]
    ]
    return header, rows


def _judges(f: Figures) -> Table:
    header = ["judge", "task", "accuracy", "low", "high", "evaluated", "missing", "invalid",
              "ties", "position_consistency", "accuracy_without_ties"]  # fmt: skip
    rows: list[list[Any]] = []
    for row in f["table"]:
        for task, cell in zip(f["tasks"], row["cells"], strict=True):
            if cell is None:
                continue
            rows.append(
                [
                    row["judge"],
                    task.slug,
                    cell["accuracy"],
                    *_interval(cell["interval"]),
                    cell["evaluated"],
                    cell["missing"],
                    cell["invalid"],
                    cell["ties"],
                    cell["position_consistency"],
                    cell["accuracy_without_ties"],
                ]
            )
        rows.append([row["judge"], "average", row["average"], "", "", "", "", "", "", "", ""])
    return header, rows


def _models(f: Figures) -> Table:
    header = ["task", "generator", "wins", "games", "win_rate", "bt_score", "bt_low", "bt_high"]
    rows: list[list[Any]] = []
    scopes = [("all", f["overall"]), *((t["task"].slug, t["ranking"]) for t in f["tasks"])]
    for scope, ranking in scopes:
        for r in ranking:
            rows.append(
                [
                    scope,
                    r["generator"],
                    r["wins"],
                    r["games"],
                    r["rate"],
                    r["score"],
                    *_interval(r["interval"]),
                ]  # fmt: skip
            )
    return header, rows


# page -> table name -> (label on the page, rows)
TABLES: dict[str, dict[str, tuple["StrOrPromise", Callable[[Figures], Table]]]] = {
    "overview": {
        "statuses": (gettext_lazy("pairs by status"), _overview_statuses),
        "throughput": (gettext_lazy("throughput"), _overview_throughput),
        "runs": (gettext_lazy("judge runs"), _overview_runs),
    },
    "agreement": {
        "alpha": (gettext_lazy("alpha per task and aspect"), _agreement_tasks),
        "annotators": (gettext_lazy("annotators"), _agreement_annotators),
    },
    "disagreements": {"pairs": (gettext_lazy("these pairs"), _disagreements)},
    "judges": {"accuracy": (gettext_lazy("accuracy per judge and task"), _judges)},
    "models": {"ranking": (gettext_lazy("rankings"), _models)},
}
