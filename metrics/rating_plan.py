"""`plan_ratings`: for each task, what the judges' accuracy is measured on, how wide its intervals
are now, how many more rated pairs (classical and prediction-powered) would make every figure
final at ± a width, and how many would tell the two closest judges apart with 80 % power
(docs/architecture.md §6.6)."""

from typing import Any

from judging.models import Judge
from metrics.judge_ppi import plan_summary
from metrics.report import powered_figures_by_task
from metrics.rounding import rounded
from projects.models import Project, Task

ESTIMAND = "accuracy on the kept pairs of the judged pool"


def rating_plan(project: Project, half_width: float, task: Task | None = None) -> dict[str, Any]:
    powered = powered_figures_by_task(project, half_width)
    ids = {judge_id for figures in powered.values() for judge_id in figures["judges"]}
    names = dict(Judge.objects.filter(pk__in=ids).values_list("pk", "name"))
    tasks = [task] if task is not None else list(project.tasks.order_by("slug"))
    plans: dict[str, Any] = {}
    for each in tasks:
        figures = powered[each.pk]
        judges = {names[judge_id]: rounded(f) for judge_id, f in figures["judges"].items()}
        shown = [f for f in judges.values() if f.get("estimate") is not None]
        closest = figures["closest"]
        plans[each.slug] = {
            "estimand": ESTIMAND,
            "rated": max((f["rated"] for f in judges.values()), default=0),
            "judged": max((f["judged"] for f in judges.values()), default=0),
            "widest_half_width": max(
                (rounded((f["high"] - f["low"]) / 2) for f in shown), default=None
            ),
            **plan_summary(judges.values()),
            "judges": dict(sorted(judges.items())),
            "closest_judges": closest
            and rounded({**closest, "judges": [names[j] for j in closest["judges"]]}),
        }
    return {"project": project.slug, "half_width": half_width, "tasks": plans}
