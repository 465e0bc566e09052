import json
import time

from django.core.management.base import BaseCommand, CommandError

from judging.models import JudgeRun
from judging.selectors import run_pair_ids
from judging.services.ensemble import ensemble_apply, ensemble_start, ensemble_summary
from judging.services.runs import RunRefused
from projects.models import Project, Task

_POLL_SECONDS = 1.0


class Command(BaseCommand):
    help = (
        "Run each task's ensemble judges on its candidate pairs (both orders) and mark every "
        "candidate easy (the judges agree at the threshold) or queued for the annotators."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--task")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']!r}")
        tasks = Task.objects.filter(project=project).select_related("project")
        if options["task"]:
            tasks = tasks.filter(slug=options["task"])
            if not tasks:
                raise CommandError(f"no task {options['task']!r} in {project.slug}")
        summaries = []
        for task in tasks:
            try:
                runs = ensemble_start(project, task)
            except RunRefused as refused:
                if options["task"]:
                    raise CommandError(str(refused)) from None
                self.stderr.write(f"{task.slug}: skipped, {refused}")
                continue
            for run in runs:
                while run.status not in (JudgeRun.Status.FINISHED, JudgeRun.Status.CANCELLED):
                    time.sleep(_POLL_SECONDS)
                    run.refresh_from_db()
            ensemble_apply(task)  # normally done as the last run finished; a no-op then
            summaries.append(ensemble_summary(task, run_pair_ids(runs[0])).as_dict())
        if options["json"]:
            self.stdout.write(json.dumps({"project": project.slug, "tasks": summaries}))
            return
        for s in summaries:
            judges = ", ".join(f"{name} {count}" for name, count in s["by_judge"].items())
            self.stdout.write(
                f"{s['task']}: {s['candidates']} candidates, {s['easy']} easy (removed), "
                f"{s['queued']} queued; threshold {s['threshold']}; alone each judge would "
                f"remove: {judges}"
            )
