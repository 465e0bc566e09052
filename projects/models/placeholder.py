import unicodedata

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext

# The names imports give their placeholder accounts (imports/services/pair_import_ratings.py).
PLACEHOLDER_PREFIX = "imported-"


def username_not_reserved(username: str) -> None:
    """Refuse a person's account a name of the placeholders' kind, in any case: the name alone
    would pass for an imported rater's in lists and exports. The one home of the rule, used
    by every form that makes an account (invitation, `user_add`, the admin)."""
    # NFKC first, as Django stores names (User.normalize_username): "ｉｍｐｏｒｔｅｄ-" is
    # saved as "imported-".
    if unicodedata.normalize("NFKC", username or "").casefold().startswith(PLACEHOLDER_PREFIX):
        raise ValidationError(
            gettext("Names starting with %(prefix)s are kept for imported ratings; choose another.")
            % {"prefix": repr(PLACEHOLDER_PREFIX)},
            code="reserved",
        )


class PlaceholderAccount(models.Model):
    """Marks a user as the placeholder an import made to hold a file's ratings (or its
    adjudications), not a person: such an account cannot sign in, belongs to no one and its
    ratings never change. Being a placeholder is this row, never the account's name, so a
    person who got a name of that shape is never taken for one (and never adopted by an
    import)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="placeholder",
    )
    # The project it was made for; kept (empty) if the project goes, so that the account
    # stays a placeholder and never looks like a person's.
    project = models.ForeignKey(
        "projects.Project",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="placeholder_accounts",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_placeholderaccount"  # kept from before the app split

    def __str__(self) -> str:
        return f"placeholder {self.user_id}"
