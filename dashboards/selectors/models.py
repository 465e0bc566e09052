"""Generator ranking over kept pairs: win rates and Bradley–Terry scores with intervals."""

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from content.models import Pair
from metrics.bootstrap import Interval
from metrics.ranking import GameRow, bradley_terry, bradley_terry_intervals, win_rates
from projects.models import Project, Task

RESAMPLES = 200


class RankingRow(TypedDict):
    """A generator's row of a ranking (the template and the CSV read these keys)."""

    generator: Hashable
    wins: int
    games: int
    rate: float
    score: float | None
    interval: Interval | None


class TaskRanking(TypedDict):
    task: Task
    ranking: list[RankingRow]
    games: int


@dataclass(frozen=True)
class ModelFigures:
    """The models page: the ranking over every task, then per task."""

    overall: list[RankingRow]
    games: int
    tasks: list[TaskRanking]


def _ranking(rows: Sequence[GameRow]) -> list[RankingRow]:
    if not rows:
        return []
    rates = win_rates(rows)
    scores = bradley_terry(rows)
    intervals = bradley_terry_intervals(rows, resamples=RESAMPLES)
    ranked: list[RankingRow] = [
        {
            "generator": name,
            "wins": rates[name][0],
            "games": rates[name][1],
            "rate": rates[name][2],
            "score": scores.get(name),
            "interval": intervals.get(name),
        }
        for name in rates
    ]
    return sorted(ranked, key=lambda r: -(r["score"] if r["score"] is not None else -1e9))


def model_figures(project: Project) -> ModelFigures:
    by_task: defaultdict[int, list[GameRow]] = defaultdict(list)
    kept = Pair.objects.filter(project=project, status=Pair.Status.KEPT, label__in=["A", "B"])
    for task_id, model_a, model_b, label in kept.values_list(
        "task_id", "response_a__generator__name", "response_b__generator__name", "label"
    ):
        by_task[task_id].append((model_a, model_b, label))
    tasks = list(project.tasks.order_by("slug"))
    everything = [row for rows in by_task.values() for row in rows]
    return ModelFigures(
        overall=_ranking(everything),
        games=len(everything),
        tasks=[
            {"task": task, "ranking": _ranking(by_task[task.pk]), "games": len(by_task[task.pk])}
            for task in tasks
        ],
    )
