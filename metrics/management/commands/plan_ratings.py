import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from metrics.rating_plan import rating_plan
from projects.models import Project


class Command(BaseCommand):
    help = (
        "How many more rated pairs would make every judge's accuracy final at ± WIDTH at 95 % "
        "(classical and prediction-powered), and tell the two closest judges apart (80 % power)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--project", required=True)
        parser.add_argument("--task", help="one task's slug (default: every task)")
        parser.add_argument(
            "--width", type=float, help="the half-width, e.g. 0.02 (default: the project's target)"
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"project {options['project']!r} does not exist")
        task = None
        if options["task"]:
            task = project.tasks.filter(slug=options["task"]).first()
            if task is None:
                raise CommandError(f"task {options['task']!r} is not in {project.slug}")
        width = project.target_half_width if options["width"] is None else options["width"]
        if not 0 < width <= 0.5:
            raise CommandError("--width is a half-width between 0 and 0.5, e.g. 0.02")
        plan = rating_plan(project, width, task)
        if options["json"]:
            self.stdout.write(json.dumps(plan))
            return
        for slug, figures in plan["tasks"].items():
            self.stdout.write(self._task_line(slug, figures, width))
            if closest := figures["closest_judges"]:
                self.stdout.write(self._closest_line(closest))

    @staticmethod
    def _task_line(slug: str, figures: dict[str, Any], width: float) -> str:
        widest = figures["widest_half_width"]
        now = "no interval yet" if widest is None else f"widest interval now ±{widest}"
        if figures["met"]:
            plan = "target met"
        elif figures["pool_too_small"]:
            plan = "fewer judged pairs than an interval needs (50): the rated-only figure is all"
        elif figures["more_powered"] is None:
            plan = "no judge answered"
        else:
            plan = (
                f"{figures['more_powered']} more rated pairs "
                f"(classical: {figures['more_classical']})"
            )
        return (
            f"{slug}: {figures['rated']} rated of {figures['judged']} judged pairs; "
            f"{figures['estimand']} to ±{width} at 95 % (final interval): {plan}; {now}"
        )

    @staticmethod
    def _closest_line(closest: dict[str, Any]) -> str:
        line = f"  closest: {closest['judges'][0]} − {closest['judges'][1]}"
        if closest["estimate"] is None:
            return f"{line}: no interval yet"
        line += f" = {closest['estimate']} [{closest['low']}, {closest['high']}]"
        if closest["told_apart"]:
            return f"{line}: told apart at 95 %"
        if closest.get("needs_target"):
            return f"{line}: closer than this target tells apart (±{closest['needs_target']} would)"
        return f"{line}: {closest['more_powered']} more rated pairs for 80 % power"
