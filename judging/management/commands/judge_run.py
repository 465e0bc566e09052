import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from core.outbox import running_embedded
from core.scheduled_jobs import JobClock, jobs_due_run
from judging.models import JudgeRun
from judging.selectors import judges_of_project, run_progress
from judging.services.runs import RunRefused, judge_run_start
from projects.models import Project, Task

_POLL_SECONDS = 1.0
_NO_WORKER_SECONDS = 30.0


class Command(BaseCommand):
    help = (
        "Run a judge over a project's pairs (or one task's) in both orders, K samples each. "
        "Trials that already have an answer are not called again."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--judge", required=True)
        parser.add_argument("--task")
        parser.add_argument("--samples", type=int, default=1)
        parser.add_argument(
            "--batch",
            action="store_true",
            help="submit through the provider's batch API (about half the price, within 24 h)",
        )
        parser.add_argument("--wait", action="store_true", help="wait until the run is over")
        parser.add_argument("--json", action="store_true", help="print the outcome as JSON")

    def handle(self, *args: object, **options: Any) -> None:
        # A mistyped name is refused, never created (as ensemble_filter does).
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']!r}")
        judge = judges_of_project(project).filter(name=options["judge"]).first()
        if judge is None:
            raise CommandError(f"no judge {options['judge']!r}: create it with judge_add")
        task: Task | None = None
        if options["task"]:
            task = Task.objects.filter(project=project, slug=options["task"]).first()
            if task is None:
                raise CommandError(f"no task {options['task']!r} in {project.slug}")
        started = time.perf_counter()
        try:
            run = judge_run_start(
                judge,
                project,
                task=task,
                samples=options["samples"],
                mode=JudgeRun.Mode.BATCH if options["batch"] else JudgeRun.Mode.LIVE,
            )
        except RunRefused as refused:
            raise CommandError(str(refused)) from None
        if options["wait"]:
            waited, warned, clock = 0.0, False, JobClock()
            while True:
                run.refresh_from_db()
                if run.status in (JudgeRun.Status.FINISHED, JudgeRun.Status.CANCELLED):
                    break
                if running_embedded():
                    # No Celery beat, and maybe no server's scheduler: this process runs the
                    # scheduled jobs (a batch run's poll among them) while it waits.
                    jobs_due_run(clock)
                idle = run.status == JudgeRun.Status.PENDING and waited > _NO_WORKER_SECONDS
                if idle and not warned:
                    self.stderr.write(
                        f"run {run.pk} has not started after {_NO_WORKER_SECONDS:.0f} s: is "
                        "a worker running (celery -A config worker)? Still waiting."
                    )
                    warned = True
                time.sleep(_POLL_SECONDS)
                waited += _POLL_SECONDS
        outcome = run_progress(run).as_dict()
        outcome["wall_seconds"] = round(time.perf_counter() - started, 3)
        if options["json"]:
            self.stdout.write(json.dumps(outcome))
            return
        self.stdout.write(
            f"Run {run.pk} of {judge.name}: {run.status}; {outcome['done']} of "
            f"{outcome['trials']} trials answered ({outcome['invalid']} invalid, "
            f"{outcome['ties']} ties), {outcome['failed']} failed, {outcome['remaining']} "
            f"remaining; {outcome['wall_seconds']} s."
        )
