from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.gold.services import MAX_GOLD_FILE_BYTES, gold_entries_from_csv, gold_set
from core.errors import DomainError
from projects.models import Task


class Command(BaseCommand):
    help = (
        "Make pairs of a task gold checks, all or nothing. FILE is CSV with the header "
        "pair_id,side (side A or B; an explanation column is optional): annotators meet them "
        "mixed into their queue at the task's rate, and they never count toward consensus."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--task", required=True, help="task slug")
        parser.add_argument(
            "--rate", type=float, help="share of each annotator's pairs that are gold (0.1)"
        )

    def handle(self, *args, **options):
        task = Task.objects.filter(project__slug=options["project"], slug=options["task"]).first()
        if task is None:
            raise CommandError(f"no task {options['task']!r} in project {options['project']!r}")
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        with path.open("rb") as handle:
            data = handle.read(MAX_GOLD_FILE_BYTES + 1)
        try:
            made = gold_set(task, gold_entries_from_csv(data), rate=options["rate"])
        except DomainError as exc:
            raise CommandError(f"nothing changed: {exc}") from None
        task.refresh_from_db()
        gold = task.pairs.filter(status="gold").count()
        self.stdout.write(
            f"{made} new gold checks in {task}; {gold} in all, at a rate of {task.gold_rate:g}."
        )
