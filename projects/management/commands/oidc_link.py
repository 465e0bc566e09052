from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from projects.services.identities import identity_link


class Command(BaseCommand):
    help = (
        "Operators: let an existing account sign in through the organisation's provider as "
        "the provider's SUBJECT (its `sub`; a refused first sign-in logs it). The issuer is "
        "ARBITER_OIDC_ISSUER. For an account whose e-mail a first sign-in was refused on: "
        "Arbiter never links the two by itself."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the existing account's username")
        parser.add_argument("subject", help="the provider's `sub` for this person")

    def handle(self, *args, **options):
        issuer = settings.ARBITER_OIDC_ISSUER
        if not issuer:
            raise CommandError("sign-in through a provider is off (ARBITER_OIDC_ISSUER)")
        user = get_user_model().objects.filter(username=options["name"]).first()
        if user is None:
            raise CommandError(f"no account named {options['name']!r}")
        try:
            identity_link(user=user, issuer=issuer, subject=options["subject"])
        except DomainError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"{user.username} signs in as {options['subject']} of {issuer}")
