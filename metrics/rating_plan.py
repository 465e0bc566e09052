"""`plan_ratings`: for each task, how wide the judges' accuracy intervals are now and how many
more rated pairs (classical and prediction-powered) would bring them to ± a width, or would
tell the two closest judges apart at 95 % (docs/architecture.md §6.6)."""

from typing import Any

from judging.models import Judge
from metrics.inputs import kept_labels
from metrics.judge_ppi import plan_summary
from metrics.report import powered_figures_by_task
from metrics.rounding import rounded
from projects.models import Project, Task


def rating_plan(project: Project, half_width: float, task: Task | None = None) -> dict[str, Any]:
    labels = kept_labels(project)
    powered = powered_figures_by_task(project, half_width)
    ids = {judge_id for figures in powered.values() for judge_id in figures["judges"]}
    names = dict(Judge.objects.filter(pk__in=ids).values_list("pk", "name"))
    tasks = [task] if task is not None else list(project.tasks.order_by("slug"))
    plans: dict[str, Any] = {}
    for each in tasks:
        figures = powered[each.pk]
        judges = {names[judge_id]: rounded(f) for judge_id, f in figures["judges"].items()}
        closest = figures["closest"]
        plans[each.slug] = {
            "rated": len(labels[each.pk]),
            **plan_summary(judges.values()),
            "judges": dict(sorted(judges.items())),
            "closest_judges": closest
            and rounded({**closest, "judges": [names[j] for j in closest["judges"]]}),
        }
    return {"project": project.slug, "half_width": half_width, "tasks": plans}
