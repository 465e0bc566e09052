"""Tokens made by signing in with a password (POST /api/auth/token/) are marked, so that at the
cap the oldest of them makes room for a new one; those made before are known by the name the
endpoint gives them."""

from django.db import migrations, models

SIGN_IN_TOKEN_NAME = "POST /api/auth/token/"  # api/views/auth.py, as it was


def mark_sign_in_tokens(apps, schema_editor):
    ApiToken = apps.get_model("projects", "ApiToken")
    ApiToken.objects.filter(name=SIGN_IN_TOKEN_NAME).update(from_sign_in=True)


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0008_api_tokens_from_drf"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="from_sign_in",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(mark_sign_in_tokens, migrations.RunPython.noop, elidable=True),
    ]
