"""API tokens end with the password they were issued under.

A token is a second password: whoever changes or resets a password (the password-change page,
the reset link, the admin, `manage.py changepassword`, a service's `set_password` + save)
means to shut out whoever knew the old one, so every token of that user is revoked in the same
save (projects/services/api_tokens.py `api_tokens_revoke_all`; the rows stay, marked revoked,
for the account page to show). New tokens are made on the account page or by
POST /api/auth/token/.

The stored hash is compared rather than trusting `set_password` alone, so that any path that
writes a new hash counts; a save that names its `update_fields` without "password" (the
sign-in's `last_login`) costs nothing.
"""

from django.conf import settings
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from projects.services.api_tokens import api_tokens_revoke_all

_CHANGED = "_arbiter_password_changed"


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="api-token-password-seen")
def _password_seen(sender, instance, update_fields=None, raw=False, **kwargs):
    setattr(instance, _CHANGED, False)
    if raw or instance.pk is None:  # fixtures, or a new account: no token yet
        return
    if update_fields is not None and "password" not in update_fields:
        return
    stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True)
    setattr(instance, _CHANGED, stored.first() not in (None, instance.password))


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="api-token-rotation")
def _tokens_rotated(sender, instance, raw=False, **kwargs):
    if not raw and getattr(instance, _CHANGED, False):
        api_tokens_revoke_all(user_id=instance.pk)
        setattr(instance, _CHANGED, False)
