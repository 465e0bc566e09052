from django.core.management.base import BaseCommand, CommandError

from core.errors import Refused
from projects.models import Project, Task
from setup.services import pairs_queue


class Command(BaseCommand):
    help = (
        "Send a project's candidate pairs (or one task's) straight to annotation, without the "
        "judge ensemble filter. Prints how many were queued."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--task", help="task slug (default: every task of the project)")

    def handle(self, *args, project, task=None, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"no project {project!r}")
        chosen = None
        if task:
            chosen = Task.objects.filter(project=found, slug=task).first()
            if chosen is None:
                raise CommandError(f"project {project!r} has no task {task!r}")
        try:
            queued = pairs_queue(found, task=chosen)
        except Refused as refused:  # an archived task
            raise CommandError(refused.message) from None
        self.stdout.write(f"{queued} pairs queued for annotation.")
