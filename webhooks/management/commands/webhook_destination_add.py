from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.errors import Invalid
from projects.selectors import projects_by_slugs
from webhooks.services import destination_save


class Command(BaseCommand):
    help = (
        "Operators: create or update a webhook destination (the URL events are POSTed to and "
        "the environment variable of this server holding its signing secret), and which "
        "projects may use it. Leads only ever pick a destination by name."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--url", help="e.g. https://ci.example.org/hooks/arbiter")
        parser.add_argument(
            "--secret-env", dest="secret_env", help="NAME of the variable holding the secret"
        )
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument(
            "--projects", help="comma-separated project slugs that may use it (replaces the list)"
        )
        scope.add_argument("--all-projects", action="store_true", help="every project may use it")

    def handle(self, *args, **options):
        projects = None
        if options["projects"] is not None:
            projects, missing = projects_by_slugs(options["projects"])
            if missing:
                raise CommandError(f"no project {', '.join(missing)}")
        try:
            destination, created = destination_save(
                name=options["name"],
                url=options["url"],
                secret_env=options["secret_env"],
                all_projects=True
                if options["all_projects"]
                else (False if projects is not None else None),
                projects=projects,
            )
        except Invalid as error:
            raise CommandError(f"destination not saved: {error.message}") from None
        except ValidationError as error:  # full_clean's: a malformed name
            raise CommandError(f"destination not saved: {'; '.join(error.messages)}") from None
        scope = (
            "every project"
            if destination.all_projects
            else ", ".join(destination.projects.values_list("slug", flat=True)) or "no project yet"
        )
        self.stdout.write(
            f"{'Created' if created else 'Updated'} webhook destination {destination.name} "
            f"({destination.url}, signed with ${destination.secret_env}); usable by {scope}."
        )
