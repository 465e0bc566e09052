"""API tokens end with the password they were issued under.

A token is a second password that never expires: whoever changes or resets a password (the
password-change page, the reset link, the admin, `manage.py changepassword`, a service's
`set_password` + save) means to shut out whoever knew the old one, so every token of that user
is deleted in the same save. The next POST /api/auth/token/ issues a new one.

The stored hash is compared rather than trusting `set_password` alone, so that any path that
writes a new hash counts; a save that names its `update_fields` without "password" (the
sign-in's `last_login`) costs nothing.
"""

from django.conf import settings
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from rest_framework.authtoken.models import Token

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
        Token.objects.filter(user_id=instance.pk).delete()
        setattr(instance, _CHANGED, False)
