import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from metrics.report import project_report
from projects.models import Project


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


class Command(BaseCommand):
    help = "Agreement, pair status and judge accuracy of a project (--json: one JSON object)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--project", required=True)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"project {options['project']!r} does not exist")
        report = project_report(project)
        if options["json"]:
            self.stdout.write(json.dumps(report))
            return
        for slug, task in report["tasks"].items():
            agreement = task["agreement"]
            self.stdout.write(
                f"{slug}: {task['pairs']} pairs, {task['kept']} kept, {task['dropped']} dropped, "
                f"{task['pending']} pending; alpha ordinal {agreement['alpha_ordinal']}, "
                f"{agreement['ratings']} ratings"
            )
            for judge, stats in task["judges"].items():
                self.stdout.write(
                    f"  {judge}: {_percent(stats['accuracy'])} % of {stats['evaluated']} "
                    f"({stats['missing']} missing)"
                )
        for judge, stats in report["judges"].items():
            self.stdout.write(
                f"{judge}: average {_percent(stats['average'])}"
                f"{'' if stats['average'] is None else ' %'} "
                f"({stats['tasks']} of {stats['labelled_tasks']} tasks with labelled pairs)"
            )
