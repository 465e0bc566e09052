"""Creating and updating judges."""

from django.core.exceptions import ValidationError
from django.db import transaction

from judging.models import Judge

EDITABLE_FIELDS = (
    "backend",
    "model",
    "base_url",
    "api_key_env",
    "sampling",
    "templates",
    "concurrency",
    "requests_per_minute",
    "timeout_seconds",
    "price_input_per_mtok",
    "price_output_per_mtok",
)


def judge_get_or_create_external(name: str) -> Judge:
    """A judge known only by the predictions imported for it."""
    judge, _ = Judge.objects.get_or_create(name=name, defaults={"backend": Judge.Backend.EXTERNAL})
    return judge


def judge_save(name: str, **changes) -> tuple[Judge, bool]:
    """Create the judge or update the given fields; validated like the admin form.
    Raises ValidationError with field messages."""
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise ValidationError({field: "not a judge setting" for field in unknown})
    if (
        "api_key_env" in changes
        and changes["api_key_env"]
        and not (changes["api_key_env"].replace("_", "").isalnum())
    ):
        raise ValidationError(
            {"api_key_env": "the NAME of an environment variable (letters, digits, _), never a key"}
        )
    with transaction.atomic():
        judge = Judge.objects.select_for_update().filter(name=name).first()
        created = judge is None
        if created:
            judge = Judge(name=name)
        for field, value in changes.items():
            setattr(judge, field, value)
        judge.full_clean()
        judge.save()
    return judge, created
