import getpass
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.errors import Invalid
from projects.models.placeholder import username_not_reserved
from projects.services.members import account_create


class Command(BaseCommand):
    help = (
        "Operators: create an account. --lead may create projects (and leads them); "
        "--operator is a superuser. Everyone else joins projects through a lead's "
        "invitation link. The password comes from --password, --password-stdin or a prompt, "
        "and must pass the server's password validators."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the username")
        secret = parser.add_mutually_exclusive_group()
        secret.add_argument("--password", help="the password (visible in the shell's history)")
        secret.add_argument(
            "--password-stdin",
            dest="password_stdin",
            action="store_true",
            help="read the password from the first line of standard input",
        )
        kind = parser.add_mutually_exclusive_group()
        kind.add_argument(
            "--lead", action="store_true", help="may create projects (projects.add_project)"
        )
        kind.add_argument("--operator", action="store_true", help="a superuser")
        parser.add_argument("--email", default="", help="optional, for password resets")

    def _password(self, options) -> str:
        if options["password"] is not None:
            return options["password"]
        if options["password_stdin"]:
            return sys.stdin.readline().rstrip("\r\n")
        if not sys.stdin.isatty():
            raise CommandError("give --password or --password-stdin (no terminal to prompt on)")
        first = getpass.getpass("Password: ")
        if first != getpass.getpass("Password (again): "):
            raise CommandError("the two passwords differ; nothing was created")
        return first

    def handle(self, *args, **options):
        try:
            username_not_reserved(options["name"])
        except ValidationError as error:
            raise CommandError(f"user not created: username: {error.messages[0]}") from None
        password = self._password(options)
        try:
            user = account_create(
                username=options["name"],
                password=password,
                email=options["email"],
                may_create_projects=options["lead"],
                operator=options["operator"],
            )
        except Invalid as invalid:
            details = "; ".join(
                f"{field}: {' '.join(messages)}" for field, messages in invalid.fields.items()
            )
            raise CommandError(f"user not created: {details or invalid.message}") from None
        if user.is_superuser:
            kind = "an operator (superuser: the admin, connections, every project)"
        elif options["lead"]:
            kind = "a lead who may create projects"
        else:
            kind = "an account without projects (a lead's invitation adds them)"
        self.stdout.write(f"Created {user.username}: {kind}.")
