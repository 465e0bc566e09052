import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from metrics.rating_plan import rating_plan
from projects.models import Project


class Command(BaseCommand):
    help = (
        "How many more rated pairs would bring every judge's accuracy to ± WIDTH at 95 % "
        "(classical and prediction-powered), and separate the two closest judges."
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
            more = (
                "target met"
                if figures["met"]
                else (
                    f"{figures['more_powered']} more rated pairs (classical: "
                    f"{figures['more_classical']})"
                )
            )
            self.stdout.write(f"{slug}: {figures['rated']} rated pairs; ±{width}: {more}")
            if closest := figures["closest_judges"]:
                self.stdout.write(
                    f"  closest: {closest['judges'][0]} − {closest['judges'][1]} = "
                    f"{closest['estimate']} [{closest['low']}, {closest['high']}]"
                )
