"""Projects, tasks and the report."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.common import AspectSerializer
from projects.access import role_in
from projects.models import Membership, Project, Task


class ProjectSettingsSerializer(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = [
            "annotators_per_pair",
            "max_span",
            "ambiguous_half_width",
            "ensemble_threshold",
            "lease_minutes",
            "edit_grace_minutes",
            "target_half_width",
        ]


class ProjectSerializer(serializers.ModelSerializer):
    """A project; `settings` only for its leads (null for annotators)."""

    role = serializers.SerializerMethodField()
    settings = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["id", "slug", "name", "scale_points", "guidelines", "role", "settings"]

    def _role(self, project: Project) -> str:
        return role_in(self.context["request"].user, project.pk, self.context["roles"])

    @extend_schema_field(serializers.ChoiceField(choices=Membership.Role.choices))
    def get_role(self, project: Project) -> str:
        return self._role(project)

    @extend_schema_field(ProjectSettingsSerializer(allow_null=True))
    def get_settings(self, project: Project):
        if self._role(project) != Membership.Role.LEAD:
            return None
        return ProjectSettingsSerializer(project).data


class TaskSerializer(serializers.ModelSerializer):
    project_slug = serializers.CharField(source="project.slug")
    aspects = AspectSerializer(many=True)

    class Meta:
        model = Task
        fields = ["id", "project", "project_slug", "slug", "name", "kind", "aspects", "guidelines"]


class TaskFilterSerializer(serializers.Serializer):
    project = serializers.CharField(required=False, max_length=64, help_text="Project id or slug.")


# The report (docs/architecture.md §7, README "report --json"): declared so that clients know
# its shape.


class ReportAgreementSerializer(serializers.Serializer):
    alpha_ordinal = serializers.FloatField(allow_null=True)
    alpha_interval = serializers.FloatField(allow_null=True)
    unanimous_direction = serializers.FloatField(allow_null=True)
    rater_label_agreement = serializers.FloatField(allow_null=True)
    ratings = serializers.IntegerField()
    rated_pairs = serializers.IntegerField()
    aspects = serializers.DictField(child=serializers.DictField())


class PoweredAccuracySerializer(serializers.Serializer):
    """A prediction-powered accuracy on the pairs the experts keep (PPI++, docs/architecture.md
    §6.6) with its 95 % interval, right however often it is looked at: from `rated` decided
    pairs (kept or dropped) and `judged` pairs of the experts' queue the judge answered;
    `estimate`, `low`, `high` are null below 50 rated pairs."""

    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    rated = serializers.IntegerField()
    judged = serializers.IntegerField()
    # A plain string: a ChoiceField would be one more "status" enum for the schema to name.
    status = serializers.CharField(
        allow_null=True,
        required=False,
        help_text='"interim": wider, until the target\'s planned information; "final": frozen',
    )


class PoweredTaskAccuracySerializer(PoweredAccuracySerializer):
    lam = serializers.FloatField(allow_null=True, help_text="the power-tuning parameter")
    used = serializers.IntegerField(
        required=False, help_text="rated pairs the figure rests on (fewer once final)"
    )
    dropped = serializers.IntegerField(required=False, help_text="rated pairs the experts dropped")
    std_error = serializers.FloatField(required=False)
    classical_low = serializers.FloatField(required=False)
    classical_high = serializers.FloatField(required=False)
    more_classical = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="more rated pairs for a final ± the target, rated pairs alone",
    )
    more_powered = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="more rated pairs for a final ± the target, prediction-powered",
    )
    spread_assumed = serializers.BooleanField(
        required=False, help_text="too few counted pairs: the plan assumes the widest spread"
    )
    pool_too_small = serializers.BooleanField(
        required=False, help_text="fewer judged pairs than an interval needs: no plan"
    )


class ClosestJudgesSerializer(PoweredTaskAccuracySerializer):
    judges = serializers.ListField(
        child=serializers.CharField(),
        help_text="the better and the worse; the difference is theirs",
    )
    told_apart = serializers.BooleanField(
        required=False, help_text="the difference's interval excluded 0 at some look (95 %)"
    )
    power = serializers.FloatField(required=False, help_text="the power the plan is for")
    needs_target = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text="a finer target that would tell them apart, when this one cannot",
    )


class SampleProgressSerializer(serializers.Serializer):
    counted = serializers.IntegerField(
        help_text="rated pairs the sample's estimate counts (those before the first open pair)"
    )
    rated_after = serializers.IntegerField(
        help_text="pairs rated after the first open pair: counted once it is decided"
    )
    waiting_on = serializers.CharField(
        allow_null=True, help_text="external id of that open pair when it holds ratings back"
    )


class ReportJudgeTaskSerializer(serializers.Serializer):
    accuracy = serializers.FloatField(allow_null=True)
    correct = serializers.IntegerField()
    evaluated = serializers.IntegerField()
    missing = serializers.IntegerField()
    invalid = serializers.IntegerField()
    ties = serializers.IntegerField()
    position_consistency = serializers.FloatField(allow_null=True)
    prediction_powered = PoweredTaskAccuracySerializer(allow_null=True)


class ReportTaskSerializer(serializers.Serializer):
    kind = serializers.CharField()
    pairs = serializers.IntegerField()
    kept = serializers.IntegerField()
    dropped = serializers.IntegerField()
    easy = serializers.IntegerField()
    pending = serializers.IntegerField()
    statuses = serializers.DictField(child=serializers.IntegerField())
    agreement = ReportAgreementSerializer()
    judges = serializers.DictField(child=ReportJudgeTaskSerializer())
    closest_judges = ClosestJudgesSerializer(allow_null=True)
    sample = SampleProgressSerializer(
        allow_null=True, help_text="when the project rates a sample chosen for information"
    )


class ReportJudgeSerializer(serializers.Serializer):
    average = serializers.FloatField(allow_null=True)
    tasks = serializers.IntegerField()
    labelled_tasks = serializers.IntegerField()
    prediction_powered = PoweredAccuracySerializer(allow_null=True)


class ReportSerializer(serializers.Serializer):
    """What `manage.py report --project P --json` prints."""

    project = serializers.CharField()
    scale_points = serializers.IntegerField()
    annotators_per_pair = serializers.IntegerField()
    target_half_width = serializers.FloatField()
    tasks = serializers.DictField(child=ReportTaskSerializer())
    judges = serializers.DictField(child=ReportJudgeSerializer())


class QueueSerializer(serializers.Serializer):
    task = serializers.SlugField(
        required=False, help_text="Only this task's candidates (default: every task)."
    )

    def validate_task(self, slug: str) -> Task:
        task = Task.objects.filter(project=self.context["project"], slug=slug).first()
        if task is None:
            raise serializers.ValidationError("The project has no task with this slug.")
        return task


class QueuedSerializer(serializers.Serializer):
    queued = serializers.IntegerField(help_text="How many candidate pairs were queued.")
