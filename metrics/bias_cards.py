"""The judges' bias cards per task (metrics/judge_bias.py), read for `report --json` and the
judges page in three queries whatever the size of the project (pair traits, judge models and
the experts' ratings, which the caller may pass when it already read them)."""

from typing import Any

from judging.models import Judge
from metrics.inputs import AnnotatorRatings, JudgeInputs, Labels, annotator_ratings, pair_traits
from metrics.judge_bias import expert_card, length_card, self_preference_card
from metrics.rounding import rounded
from projects.models import Project, Task
from projects.scale import center, side_of


def task_bias_cards(
    project: Project,
    tasks: list[Task],
    labels: Labels,
    judged: JudgeInputs,
    names: dict[int, str],
    ratings: AnnotatorRatings | None = None,
) -> dict[int, dict[int, dict[str, Any]]]:
    """{task id: {judge id: {"length", "self_preference", "experts"}}}; `names` maps annotator
    ids to usernames, `ratings` is metrics.inputs.annotator_ratings."""
    if not judged.names:
        return {}
    ratings = annotator_ratings(project) if ratings is None else ratings
    traits = pair_traits(project)
    models = dict(Judge.objects.filter(pk__in=list(judged.names)).values_list("pk", "model"))
    cards: dict[int, dict[int, dict[str, Any]]] = {}
    for task in tasks:
        task_labels = labels.get(task.pk, {})
        experts: dict[str, dict[int, str]] = {}
        for annotator, rated in ratings.get(task.pk, {}).items():
            sides = {
                pair_id: side_of(overall, center(scale))
                for pair_id, overall, scale, _swapped, _seconds in rated
                if pair_id in task_labels
            }
            sides = {pair_id: side for pair_id, side in sides.items() if side}
            if sides:
                experts[names.get(annotator, str(annotator))] = sides
        for judge_id in judged.by_name():
            if task.pk not in judged.tasks[judge_id]:
                continue
            verdicts = judged.rows[judge_id][task.pk]
            own = [models.get(judge_id, ""), judged.names[judge_id]]
            cards.setdefault(task.pk, {})[judge_id] = rounded(
                {
                    "length": length_card(verdicts, task_labels, traits),
                    "self_preference": self_preference_card(verdicts, task_labels, traits, own),
                    "experts": expert_card(verdicts, experts),
                }
            )
    return cards
