"""Creating, updating and deleting judges."""

from django.core.exceptions import ValidationError
from django.db import transaction

from judging.models import Judge, JudgeRun, TaskEnsemble, Verdict

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


class JudgeInUse(Exception):
    """The judge has results or a role; deleting it would take them with it."""


def judge_delete(judge: Judge) -> None:
    """Delete a judge that has no runs, no verdicts and sits in no ensemble: a judge is
    global, and its results in any project must never vanish with it."""
    with transaction.atomic():
        locked = Judge.objects.select_for_update().filter(pk=judge.pk).first()
        if locked is None:
            return  # deleted meanwhile: a repeated delete
        if (
            JudgeRun.objects.filter(judge=locked).exists()
            or Verdict.objects.filter(judge=locked).exists()
            or TaskEnsemble.objects.filter(judges=locked).exists()
        ):
            raise JudgeInUse(
                f"judge {locked.name!r} has runs, verdicts or an ensemble role; it stays"
            )
        locked.delete()
