"""Which decided pairs each judge disagrees with the experts on: the pair browser's "judges
disagree" filter.

A judge disagrees on a pair the experts decided (label A or B) when it names the other side in
more of its answers than it names theirs, over both orders and every sample (a tie names no
side). One pass over the project's verdicts, grouped by pair and judge, gives the set of every
judge of the project (its own and the operator's) and their union ("any"). At ten times MMRB2
that pass reads 1.8 million verdicts (seconds): the sets are kept as a precomputed figure
(dashboards/snapshots.py, page "disagreement"), refreshed ahead after an import, a finished run
or a decision, so the filter reads them instead of the verdicts.
"""

from array import array
from dataclasses import dataclass

from django.db.models import Count, F, Q

from judging.models import Judge, Verdict
from projects.access import project_or_operator_wide
from projects.models import Project

ANY_JUDGE = "any"


@dataclass(frozen=True)
class JudgeSets:
    """pairs: {ANY_JUDGE: ids, str(judge id): ids, ...}, the sorted ids of the pairs each judge
    of the project disagrees with the experts on (every judge of the project has its key)."""

    pairs: dict[str, "array[int]"]


def judges_disagreement(project: Project) -> JudgeSets:
    """The project's judges' disagreement sets (JudgeSets)."""
    judges = list(
        Judge.objects.filter(project_or_operator_wide(project)).values_list("pk", flat=True)
    )
    against = (
        Verdict.objects.filter(
            pair__project=project,
            pair__label__in=("A", "B"),
            choice__in=("A", "B"),
            judge_id__in=judges,
        )
        .values("pair_id", "judge_id")
        .annotate(
            answers=Count("pk"),
            with_experts=Count("pk", filter=Q(choice=F("pair__label"))),
        )
        .filter(answers__gt=2 * F("with_experts"))
        .values_list("pair_id", "judge_id")
    )
    by_judge: dict[int, list[int]] = {pk: [] for pk in judges}
    for pair_id, judge_id in against.iterator(chunk_size=10_000):
        by_judge[judge_id].append(pair_id)
    # Arrays of 8-byte ids: a compact pickle, read back in milliseconds.
    sets = {str(pk): array("q", sorted(ids)) for pk, ids in by_judge.items()}
    sets[ANY_JUDGE] = array("q", sorted({pk for ids in by_judge.values() for pk in ids}))
    return JudgeSets(sets)
