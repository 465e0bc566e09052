"""The rules that keep or drop a complete pair, each once in Python and once as the query
twin beside it, for every reader: the decision (annotation/services/consensus.py) and the
disagreement queue, which also lists the pairs that nearly fall under a rule.

A complete pair is dropped when its ratings spread wider than the project's max span, or when
their mean lies in the ambiguous band, centre ± half width (closed). It nearly is when the
span is at the max, or the mean within NEAR_BAND of the band's edge."""

from django.db.models import Q

from projects.models import Project

EPSILON = 1e-9  # means like 10/3 must not fall out of a closed band by rounding
NEAR_BAND = 0.5  # "next to the ambiguous band": this much beyond its edge


def too_spread(span: int, project: Project, *, nearly: bool = False) -> bool:
    return span >= project.max_span if nearly else span > project.max_span


def too_spread_q(project: Project, *, nearly: bool = False) -> Q:
    if nearly:
        return Q(consensus_span__gte=project.max_span)
    return Q(consensus_span__gt=project.max_span)


def ambiguous(mean: float, project: Project, *, nearly: bool = False) -> bool:
    return abs(mean - project.center) <= _half_band(project, nearly)


def ambiguous_q(project: Project, *, nearly: bool = False) -> Q:
    half = _half_band(project, nearly)
    return Q(consensus_mean__gte=project.center - half, consensus_mean__lte=project.center + half)


def kept(mean: float, span: int, project: Project) -> bool:
    """Whether the rules keep a complete pair of this mean and span."""
    return not too_spread(span, project) and not ambiguous(mean, project)


def kept_q(project: Project) -> Q:
    """`kept` in a query, over the stored consensus columns."""
    return ~too_spread_q(project) & ~ambiguous_q(project)


def _half_band(project: Project, nearly: bool) -> float:
    return project.ambiguous_half_width + (NEAR_BAND if nearly else 0.0) + EPSILON
