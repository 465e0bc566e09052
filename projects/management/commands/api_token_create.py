from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from projects.models import ApiToken, Project
from projects.services.api_tokens import api_token_create


class Command(BaseCommand):
    help = (
        "Operators: make an API token for a user and print its key (on standard output, "
        "alone: the only time it is shown). Read-write and reaching all of the user's "
        "projects unless --read-only or --project say otherwise; expires after --days "
        "(the server's default lifetime unless given)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="made by an operator", help="shown in lists")
        parser.add_argument("--days", type=int, help="lifetime in days")
        parser.add_argument("--read-only", dest="read_only", action="store_true")
        parser.add_argument("--project", help="a project's slug: the token reaches it only")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user named {options['username']!r}")
        project = None
        if options["project"]:
            project = Project.objects.filter(slug=options["project"]).first()
            if project is None:
                raise CommandError(f"no project with the slug {options['project']!r}")
        access = ApiToken.Access.READ if options["read_only"] else ApiToken.Access.WRITE
        try:
            created = api_token_create(
                user=user,
                name=options["name"],
                days=options["days"],
                access=access,
                project=project,
            )
        except DomainError as error:
            raise CommandError(f"no token made: {error.message}") from None
        token = created.token
        self.stderr.write(
            f"token {token.prefix}… for {user.username}: {token.get_access_display()}, "
            f"{'project ' + project.slug if project else 'all their projects'}, "
            f"expires {token.expires_at:%Y-%m-%d %H:%M} UTC"
        )
        self.stdout.write(created.key)
