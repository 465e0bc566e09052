from django.core.management.base import BaseCommand, CommandError

from core.errors import Invalid
from judging.management.commands.judge_add import error_text
from judging.models import Connection
from judging.services.judges import connection_save
from projects.selectors import projects_by_slugs


class Command(BaseCommand):
    help = (
        "Operators: create or update a connection to a model provider (where judges' calls "
        "go and which environment variable of this server holds the key), and which projects "
        "may use it. Leads only ever pick a connection by name."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--backend", choices=Connection.Backend.values)
        parser.add_argument("--base-url", dest="base_url", help="e.g. https://api.openai.com/v1")
        parser.add_argument(
            "--api-key-env", dest="api_key_env", help="NAME of the variable holding the key"
        )
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument(
            "--projects", help="comma-separated project slugs that may use it (replaces the list)"
        )
        scope.add_argument("--all-projects", action="store_true", help="every project may use it")

    def handle(self, *args, **options):
        existing = Connection.objects.filter(name=options["name"]).first()
        if existing is None and not (options["backend"] and options["base_url"]):
            raise CommandError("a new connection needs --backend and --base-url")
        projects = None
        if options["projects"] is not None:
            projects, missing = projects_by_slugs(options["projects"])
            if missing:
                raise CommandError(f"no project {', '.join(missing)}")
        try:
            connection, created = connection_save(
                options["name"],
                backend=options["backend"],
                base_url=options["base_url"],
                api_key_env=options["api_key_env"],
                all_projects=True
                if options["all_projects"]
                else (False if projects is not None else None),
                projects=projects,
            )
        except Invalid as error:
            raise CommandError(f"connection not saved: {error_text(error)}") from None
        scope = (
            "every project"
            if connection.all_projects
            else ", ".join(connection.projects.values_list("slug", flat=True)) or "no project yet"
        )
        key = f"key from ${connection.api_key_env}" if connection.api_key_env else "no key"
        self.stdout.write(
            f"{'Created' if created else 'Updated'} connection {connection.name} "
            f"({connection.backend}, {connection.base_url}, {key}); usable by {scope}."
        )
