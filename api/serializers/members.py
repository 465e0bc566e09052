"""A project's members (their role, tasks and quotas) and its pairs in progress (leads only).
The bodies refuse unknown fields: a misspelt quota must not answer 200 and change nothing."""

from rest_framework import serializers

from annotation.models import Assignment
from api.serializers.common import RefusesUnknownFields
from projects.models import Membership, Task

# The members page's bound (projects/forms.py): far above any real quota, far below overflow.
MAX_QUOTA = 10_000_000


def _quota_field(help_text: str) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=1, max_value=MAX_QUOTA, allow_null=True, required=False, help_text=help_text
    )


class _TextField(serializers.CharField):
    """Text only: DRF's CharField would read 5 or 2.5 as "5" or "2.5". And text with a UTF-8
    form: a lone surrogate (JSON allows one as an escape) is no name the database can
    compare, which would be a 500."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            raise serializers.ValidationError("text without a UTF-8 form") from None
        return super().to_internal_value(data)


class MembershipSerializer(serializers.ModelSerializer):
    """A member of the project: `tasks` are those their membership names (none: every task
    of the project); quotas are the most pairs they may take (null: no limit)."""

    username = serializers.CharField(source="user.username", read_only=True)
    tasks: "serializers.SlugRelatedField[Task]" = serializers.SlugRelatedField(
        slug_field="slug", many=True, read_only=True
    )

    class Meta:
        model = Membership
        fields = ["id", "username", "role", "tasks", "project_quota", "task_quota"]
        read_only_fields = fields


class MembershipQuotasSerializer(RefusesUnknownFields):
    """The quotas to change; a field left out keeps its value, null removes the limit."""

    project_quota = _quota_field("Pairs at most in the whole project (null: no limit).")
    task_quota = _quota_field("Pairs at most in each task (null: no limit).")


class MemberAddSerializer(RefusesUnknownFields):
    """An existing account to add, by its exact username or the e-mail of exactly one
    account; `tasks`: slugs of the project's tasks (none: all of them)."""

    identifier = _TextField(
        max_length=254, help_text="The exact username, or the e-mail of exactly one account."
    )
    role = serializers.ChoiceField(
        choices=Membership.Role.choices, default=Membership.Role.ANNOTATOR
    )
    tasks = serializers.ListField(
        child=serializers.SlugField(max_length=64),
        default=list,
        max_length=500,
        help_text="Slugs of the project's tasks the member may annotate (none: every task).",
    )

    def validate_tasks(self, slugs: list[str]) -> list[Task]:
        wanted = set(slugs)
        # As on the members page: a new member is given active tasks only.
        found = list(Task.objects.active().filter(project=self.context["project"], slug__in=wanted))
        unknown = sorted(wanted - {task.slug for task in found})
        if unknown:
            raise serializers.ValidationError(
                f"the project has no active task with this slug: {', '.join(unknown)}"
            )
        return found


class MemberAddedSerializer(serializers.Serializer):
    detail = serializers.CharField(
        help_text="The same answer whether or not an account matched: check the members list."
    )


class LeaseSerializer(serializers.ModelSerializer):
    """A pair in progress: which annotator holds it since when, until when (a lease that ran
    out stays listed until the pair is claimed again or released)."""

    pair = serializers.IntegerField(source="pair_id", read_only=True)
    task = serializers.SlugField(source="pair.task.slug", read_only=True)
    annotator = serializers.CharField(source="annotator.username", read_only=True)
    claimed_at = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Assignment
        fields = ["id", "pair", "task", "annotator", "status", "claimed_at", "lease_expires_at"]
        read_only_fields = fields
