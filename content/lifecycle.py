"""A pair's lifecycle, in one place for every reader: its statuses and who decided it, the
groups of statuses the services and pages ask about, the rules that keep or drop a complete
pair, and the grace period after which what an annotator finished is final. Each rule is
stated once for Python and once as the query twin beside it.

The decision itself needs the ratings, so it lives above, in
annotation/services/consensus.py: `decision_set` applies these rules to one pair,
`pair_decide` and `pairs_decide` save and announce (`pair.decided`, `task.complete`); every
path that changes a decision goes through them (ratings, a lead, a settings change, the pair
browser's bulk actions, an import).

The path of a pair: candidate → (easy, by the judge ensemble) → queued → in progress →
complete → kept or dropped (by its ratings, a lead, or an imported label); a gold check
stands apart (it measures annotators and is never decided).

Keep and drop: a complete pair is dropped when its ratings spread wider than the project's
max span, or when their mean lies in the ambiguous band, centre ± half width (closed). It
nearly is when the span is at the max, or the mean within NEAR_BAND of the band's edge (the
disagreement queue lists those too).
"""

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from projects.models import Project


class PairStatus(models.TextChoices):
    CANDIDATE = "candidate", _("Candidate")
    EASY = "easy", _("Easy (removed by the judge ensemble)")
    QUEUED = "queued", _("Queued for annotation")
    IN_PROGRESS = "in_progress", _("In progress")
    COMPLETE = "complete", _("Complete")
    KEPT = "kept", _("Kept")
    DROPPED = "dropped", _("Dropped")
    GOLD = "gold", _("Gold check")


class PairDecidedBy(models.TextChoices):
    NONE = "", _("Undecided")
    CONSENSUS = "consensus", _("Consensus")
    ADJUDICATION = "adjudication", _("Adjudication")
    IMPORTED = "imported", _("Imported label")


# ------------------------------------------------------------------------- status groups

# Pairs annotators can still be given and ratings can still change.
OPEN_STATUSES = (PairStatus.QUEUED, PairStatus.IN_PROGRESS)

# Pairs an annotator may rate: the open ones and gold checks (which take no slots).
RATEABLE_STATUSES = (*OPEN_STATUSES, PairStatus.GOLD)

# Pairs the experts still have to finish: a task with none left is complete.
IN_THE_QUEUE = (*OPEN_STATUSES, PairStatus.COMPLETE)

# Pairs decided kept or dropped (by their ratings, a lead or an imported label).
DECIDED_STATUSES = (PairStatus.KEPT, PairStatus.DROPPED)

# The pairs a judge's labels and the prediction-powered figures cover: those in the experts'
# queue and those decided (candidates, easy pairs and gold checks aside).
POOL_STATUSES = (*IN_THE_QUEUE, *DECIDED_STATUSES)

# Who decides pairs in the announced sense (pair.decided): their ratings or a lead. A label
# imported alone is the file's, decided by no one here.
ANNOUNCED_DECIDERS = (PairDecidedBy.CONSENSUS, PairDecidedBy.ADJUDICATION)


# -------------------------------------------------------------------------- keep and drop

EPSILON = 1e-9  # means like 10/3 must not fall out of a closed band by rounding
NEAR_BAND = 0.5  # "next to the ambiguous band": this much beyond its edge


def too_spread(span: int, project: "Project", *, nearly: bool = False) -> bool:
    return span >= project.max_span if nearly else span > project.max_span


def too_spread_q(project: "Project", *, nearly: bool = False) -> Q:
    if nearly:
        return Q(consensus_span__gte=project.max_span)
    return Q(consensus_span__gt=project.max_span)


def ambiguous(mean: float, project: "Project", *, nearly: bool = False) -> bool:
    return abs(mean - project.center) <= _half_band(project, nearly)


def ambiguous_q(project: "Project", *, nearly: bool = False) -> Q:
    half = _half_band(project, nearly)
    return Q(consensus_mean__gte=project.center - half, consensus_mean__lte=project.center + half)


def kept(mean: float, span: int, project: "Project") -> bool:
    """Whether the rules keep a complete pair of this mean and span."""
    return not too_spread(span, project) and not ambiguous(mean, project)


def kept_q(project: "Project") -> Q:
    """`kept` in a query, over the stored consensus columns."""
    return ~too_spread_q(project) & ~ambiguous_q(project)


def _half_band(project: "Project", nearly: bool) -> float:
    return project.ambiguous_half_width + (NEAR_BAND if nearly else 0.0) + EPSILON


# --------------------------------------------------------------------------- grace period


def within_grace(project: "Project", finished_at: datetime | None, now: datetime) -> bool:
    """Whether what an annotator finished at `finished_at` (a rating submitted, a skip) may
    still be corrected or undone at `now`: for the project's `edit_grace_minutes` after."""
    return finished_at is not None and finished_at > _grace_start(project, now)


def within_grace_q(project: "Project", field: str, now: datetime) -> Q:
    """`within_grace` in a query, over the time in `field` (a NULL time is not within)."""
    return Q(**{f"{field}__gt": _grace_start(project, now)})


def _grace_start(project: "Project", now: datetime) -> datetime:
    return now - timedelta(minutes=project.edit_grace_minutes)
