"""Rating a sample chosen for information (docs/architecture.md §6.3).

When a lead switches a project to a sample, each pair's sampling weight is frozen from the
judges' uncertainty about it: with q the share of the judges' trials naming A among those
naming a side, the uncertainty is 1 - |2q - 1| (1 when they split evenly, 0 when unanimous).
Within each task the weights are the uncertainty over its mean, mixed with a uniform floor so
that every pair can be drawn: w = FLOOR + (1 - FLOOR) * u / mean(u), mean 1. A pair no judge
answered, and every pair of a task on which the judges are unanimous everywhere, weighs 1.

The claim then serves pairs by draw / weight (content.models.pair.SAMPLE_ORDER): the rated
pairs are, at every moment, those with draw <= t * w for the current t, so each was rated
with probability min(1, t * w) and the active estimate (metrics/ppi.py::active_mean) weighs
it back. The weights are frozen once, before the first rating of the sample; they are not
changed by later verdicts (the guarantee needs them fixed). Pairs imported later weigh 1.
"""

from collections import defaultdict

from django.db import transaction
from django.db.models import Count, Q
from django.utils.translation import gettext

from content.models import Pair
from core.errors import Invalid
from judging.models import Verdict
from projects.models import Project

FLOOR = 0.8  # the uniform share of the weight (bench/label_efficiency.py: 0.3 under-covered)


def uncertainty(a: int, b: int) -> float | None:
    """The judges' uncertainty about a pair from their trials naming A and B; None without any."""
    if a + b == 0:
        return None
    return 1.0 - abs(2 * a / (a + b) - 1)


def weights(uncertainties: dict[int, float | None]) -> dict[int, float]:
    """One task's weights (the module's rule), mean 1 over the pairs with an uncertainty."""
    known = [u for u in uncertainties.values() if u is not None]
    mean = sum(known) / len(known) if known else 0.0
    if mean <= 0:
        return dict.fromkeys(uncertainties, 1.0)
    return {
        pair: 1.0 if u is None else FLOOR + (1 - FLOOR) * u / mean
        for pair, u in uncertainties.items()
    }


@transaction.atomic
def sample_start(project: Project, *, budget: int | None) -> int:
    """Switch the project to rating a sample of at most `budget` pairs per task (None: no
    limit), freezing the weights of its pairs that have none. Returns how many were weighed."""
    if budget is not None and budget < 1:
        raise Invalid("budget below 1", fields={"budget": [gettext("At least 1 pair per task.")]})
    locked = Project.objects.select_for_update().get(pk=project.pk)
    already = locked.rating_mode == Project.RatingMode.SAMPLE
    for each in (locked, project):  # the caller's copy says it too
        each.rating_mode, each.rating_budget = Project.RatingMode.SAMPLE, budget
    locked.save(update_fields=["rating_mode", "rating_budget"])
    if already:
        return 0  # a new budget only: the sample's weights stay as they were frozen
    unweighed = Pair.objects.filter(project=project, weight__isnull=True)
    votes = dict(
        (pair_id, (a, b))
        for pair_id, a, b in Verdict.objects.filter(pair__in=unweighed, choice__in=["A", "B"])
        .values("pair_id")
        .annotate(a=Count("id", filter=Q(choice="A")), b=Count("id", filter=Q(choice="B")))
        .values_list("pair_id", "a", "b")
        .order_by()
    )
    by_task: dict[int, dict[int, float | None]] = defaultdict(dict)
    for pair_id, task_id in unweighed.values_list("pk", "task_id").iterator(chunk_size=20_000):
        by_task[task_id][pair_id] = uncertainty(*votes[pair_id]) if pair_id in votes else None
    weighed = [
        Pair(pk=pair_id, weight=weight)
        for task_pairs in by_task.values()
        for pair_id, weight in weights(task_pairs).items()
    ]
    Pair.objects.bulk_update(weighed, ["weight"], batch_size=2000)
    return len(weighed)


def sample_stop(project: Project) -> None:
    """Back to rating every pair (the weights stay, should the sample resume)."""
    project.rating_mode, project.rating_budget = Project.RatingMode.ALL, None
    project.save(update_fields=["rating_mode", "rating_budget"])
