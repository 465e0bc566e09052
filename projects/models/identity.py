from django.conf import settings
from django.db import models
from django.db.models import Q


class ExternalIdentity(models.Model):
    """An account's sign-in through the organisation's OpenID provider: the provider's
    `(issuer, sub)` pair, which the provider promises never to reuse for another person. An
    account is found by this pair only, never by an e-mail address (addresses are reused and
    renamed; projects/services/identities.py)."""

    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_identities"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="identity_issuer_subject"),
            models.CheckConstraint(
                condition=~Q(issuer="") & ~Q(subject=""), name="identity_issuer_subject_set"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.issuer} {self.subject} → {self.user_id}"
