"""Judges, runs and verdicts (leads only)."""

import re

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.common import RefusesUnknownFields, id_field, ref_field
from judging.models import (
    MAX_CONCURRENCY,
    MAX_REQUESTS_PER_MINUTE,
    MAX_SAMPLES,
    MAX_TIMEOUT_SECONDS,
    Connection,
    Judge,
    JudgeRun,
    PromptTemplate,
    Verdict,
)

_STORABLE_TEXT = re.compile("[^\x00\ud800-\udfff]*", re.DOTALL)
CALLABLE_BACKENDS = [choice for choice in Judge.Backend.choices if choice[0] != "external"]


# A price as text: what the schema's pattern says and the field accepts, the same set.
# (Decimal() alone also reads "1e2", " 5 " and "-0"; drf-spectacular's own pattern for a
# DecimalField accepts "" and "-", which the field refuses.)
PRICE_PATTERN = r"^\d{1,6}(?:\.\d{1,4})?$"
_PRICE = re.compile(PRICE_PATTERN.strip("^$"), re.ASCII)


@extend_schema_field(
    {
        "type": "string",
        "format": "decimal",
        "pattern": PRICE_PATTERN,
        "description": 'USD per million tokens, e.g. "2.5" (up to 6 digits, 4 decimals); '
        "a JSON number is read too",
    }
)
class PriceField(serializers.DecimalField):
    default_error_messages = {
        "price": "a price in USD per million tokens, e.g. 2.5 (up to 6 digits and 4 decimals)"
    }

    def __init__(self, **kwargs):
        super().__init__(max_digits=10, decimal_places=4, min_value=0, **kwargs)

    def to_internal_value(self, data):
        if isinstance(data, str) and not _PRICE.fullmatch(data):
            self.fail("price")
        return super().to_internal_value(data)


class JudgeSerializer(serializers.ModelSerializer):
    """A judge: a project's (its leads change it) or the operator's (`project` null: run
    only). API judges call through `connection`, an operator's connection named here; its
    URL and key never appear in the API."""

    project = serializers.IntegerField(source="project_id", allow_null=True)
    connection = serializers.CharField(source="connection.name", allow_null=True, default=None)

    class Meta:
        model = Judge
        fields = [
            "id", "name", "project", "backend", "connection", "model", "sampling",
            "templates", "concurrency", "requests_per_minute", "timeout_seconds",
            "price_input_per_mtok", "price_output_per_mtok", "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = fields


class TemplateSerializer(serializers.ModelSerializer):
    """One version of a project's prompt template."""

    project = serializers.IntegerField(source="project_id")

    class Meta:
        model = PromptTemplate
        fields = ["id", "project", "name", "version", "answer_format", "body", "created_at"]
        read_only_fields = fields


class TemplateInputSerializer(serializers.Serializer):
    """A new version of a project's template; a built-in's name makes the project's copy."""

    project = ref_field()
    name = serializers.SlugField(max_length=64)
    answer_format = serializers.ChoiceField(choices=PromptTemplate.AnswerFormat.choices)
    body = serializers.CharField(
        max_length=100_000, help_text="Contains {prompt}, {first} and {second} once each."
    )

    def validate_body(self, value: str) -> str:
        _storable(value)
        return value


class TemplateFilterSerializer(serializers.Serializer):
    project = ref_field(required=False)
    name = serializers.SlugField(max_length=64, required=False)


class ConnectionSerializer(serializers.ModelSerializer):
    """An operator's connection a project may use (name and backend only)."""

    class Meta:
        model = Connection
        fields = ["name", "backend"]
        read_only_fields = fields


def _storable(value) -> None:
    """JSON the database stores as it is: no NUL characters or lone surrogates in any key or
    string (PostgreSQL's jsonb refuses both)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _storable(key)
            _storable(item)
    elif isinstance(value, list):
        for item in value:
            _storable(item)
    elif isinstance(value, str) and not _STORABLE_TEXT.fullmatch(value):
        raise serializers.ValidationError("no NUL characters or lone surrogates in keys or text")


class JudgeInputSerializer(RefusesUnknownFields):
    """What a create (POST), a replace (PUT) or a change (PATCH) sends; the judge service
    validates the whole judge again before saving."""

    name = serializers.CharField(
        max_length=100, help_text="Unique in the project; cannot change later."
    )
    project = ref_field()  # one the user leads; cannot change later
    backend = serializers.ChoiceField(choices=CALLABLE_BACKENDS)
    connection = serializers.CharField(
        max_length=64,
        required=False,
        allow_null=True,
        help_text="Name of an operator's connection allowed for the project (API backends).",
    )
    model = serializers.CharField(max_length=200, required=False, allow_blank=True)
    sampling = serializers.DictField(
        required=False, help_text='e.g. {"temperature": 0, "max_tokens": 1024, "seed": 1}'
    )
    templates = serializers.DictField(
        child=serializers.CharField(max_length=64),
        required=False,
        help_text='{task kind: template name}, e.g. {"t2i": "mjbench-t2i"}',
    )
    concurrency = serializers.IntegerField(min_value=1, max_value=MAX_CONCURRENCY, required=False)
    requests_per_minute = serializers.IntegerField(
        min_value=1,
        max_value=MAX_REQUESTS_PER_MINUTE,
        required=False,
        allow_null=True,
        help_text="a hard cap; null: none (calls adapt to what the API takes)",
    )
    timeout_seconds = serializers.FloatField(
        min_value=0.1, max_value=MAX_TIMEOUT_SECONDS, required=False
    )
    price_input_per_mtok = PriceField(required=False)
    price_output_per_mtok = PriceField(required=False)

    def validate_sampling(self, value: dict) -> dict:
        _storable(value)
        return value

    def validate_templates(self, value: dict) -> dict:
        _storable(value)
        return value

    def unknown_field_message(self, field: str) -> str:
        # Refused, not ignored: a lead sending base_url or api_key_env must learn that the
        # operator's connection decides where calls go and which key they carry.
        if field in ("base_url", "api_key_env"):
            return "set by the operator in a connection; choose one with `connection`"
        return "not a judge setting"

    def validate_name(self, value: str) -> str:
        current = self.context.get("judge")
        if current is not None and value != current.name:
            raise serializers.ValidationError("a judge's name cannot change")
        return value


class RunProgressSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    judge = serializers.CharField()
    status = serializers.ChoiceField(choices=JudgeRun.Status.choices)
    trials = serializers.IntegerField()
    done = serializers.IntegerField()
    answered = serializers.IntegerField()
    ties = serializers.IntegerField()
    invalid = serializers.IntegerField()
    failed = serializers.IntegerField()
    remaining = serializers.IntegerField()
    percent = serializers.IntegerField()
    rate_per_second = serializers.FloatField()
    eta_seconds = serializers.FloatField(allow_null=True)
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost = serializers.FloatField()
    mode = serializers.ChoiceField(choices=JudgeRun.Mode.choices)
    cost_saved = serializers.FloatField(help_text="The batch discount against live calls.")
    chunks = serializers.IntegerField()
    chunks_done = serializers.IntegerField()


def progress_payload(progress) -> dict:
    return {
        **progress.as_dict(),
        "percent": progress.percent,
        "chunks": progress.chunks,
        "chunks_done": progress.chunks_done,
    }


class RunSerializer(serializers.ModelSerializer):
    project = serializers.IntegerField(source="project_id")
    project_slug = serializers.CharField(source="project.slug")
    judge = serializers.IntegerField(source="judge_id")
    judge_name = serializers.CharField(source="judge.name")
    task = serializers.IntegerField(source="task_id", allow_null=True)
    task_slug = serializers.CharField(source="task.slug", allow_null=True, default=None)

    class Meta:
        model = JudgeRun
        fields = [
            "id", "project", "project_slug", "judge", "judge_name", "task", "task_slug",
            "samples", "status", "purpose", "mode", "trials", "source", "created_at", "started_at",
            "finished_at",
        ]  # fmt: skip


class RunDetailSerializer(RunSerializer):
    """A run with its progress (`progress` is set on the run by the view)."""

    progress = RunProgressSerializer()

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "progress"]


class RunStartSerializer(serializers.Serializer):
    project = ref_field()
    judge = id_field(help_text="Judge id (not an external one).")
    task = serializers.SlugField(
        max_length=64, required=False, allow_null=True, help_text="Task slug; all when absent."
    )
    samples = serializers.IntegerField(min_value=1, max_value=MAX_SAMPLES, default=1)
    mode = serializers.ChoiceField(
        choices=JudgeRun.Mode.choices,
        default=JudgeRun.Mode.LIVE,
        help_text="batch: through the provider's batch API (about half the price, within 24 h).",
    )


class RunFilterSerializer(serializers.Serializer):
    project = ref_field(required=False)
    judge = id_field(required=False)
    status = serializers.ChoiceField(choices=JudgeRun.Status.choices, required=False)
    purpose = serializers.ChoiceField(choices=JudgeRun.Purpose.choices, required=False)


class VerdictSerializer(serializers.ModelSerializer):
    judge = serializers.IntegerField(source="judge_id")
    judge_name = serializers.CharField(source="judge.name")
    pair = serializers.IntegerField(source="pair_id")
    pair_external_id = serializers.CharField(source="pair.external_id")
    run = serializers.IntegerField(source="run_id", allow_null=True)

    class Meta:
        model = Verdict
        fields = [
            "id", "judge", "judge_name", "pair", "pair_external_id", "run", "order", "sample",
            "choice", "error", "latency_ms", "input_tokens", "output_tokens", "created_at",
        ]  # fmt: skip


class VerdictDetailSerializer(VerdictSerializer):
    template = serializers.IntegerField(source="template_id", allow_null=True)

    class Meta(VerdictSerializer.Meta):
        fields = [*VerdictSerializer.Meta.fields, "raw_output", "template"]


class VerdictFilterSerializer(serializers.Serializer):
    project = ref_field(required=False)
    judge = id_field(required=False)
    task = serializers.SlugField(max_length=64, required=False, help_text="Task slug.")
    pair = id_field(required=False)


class VerdictImportSerializer(serializers.Serializer):
    project = ref_field()
    task = serializers.SlugField(max_length=64, help_text="Task slug.")
    judge = serializers.CharField(
        max_length=100, help_text="Judge name (created as an external judge when missing)."
    )
    file = serializers.FileField(
        help_text='MMRB2 predictions {PAIR_ID: {"forward": [...]}}, or an MJ-Bench '
        "scoring-model result file (format mjbench-scores)"
    )
    format = serializers.ChoiceField(
        choices=["mmrb2", "mjbench-scores"],
        default="mmrb2",
        help_text="mjbench-scores: a pointwise judge's scores, matched by image names",
    )
    strict_mmrb2 = serializers.BooleanField(
        default=False,
        help_text="read an MMRB2 file exactly as MMRB2's compute_accuracy.py does (README)",
    )

    def validate_file(self, uploaded):
        # Refused before the view copies it for the service (which checks the same limit).
        limit = settings.ARBITER_VERDICT_FILE_MAX_BYTES
        if uploaded.size > limit:
            raise serializers.ValidationError(
                f"the file is {uploaded.size} bytes, above the {limit} bytes limit "
                "(ARBITER_VERDICT_FILE_MAX_BYTES)"
            )
        return uploaded

    def validate(self, attrs):
        if attrs.get("strict_mmrb2") and attrs.get("format") != "mmrb2":
            raise serializers.ValidationError({"strict_mmrb2": "for MMRB2 files only"})
        return attrs


class ChoiceCountsSerializer(serializers.Serializer):
    A = serializers.IntegerField()
    B = serializers.IntegerField()
    tie = serializers.IntegerField()
    invalid = serializers.IntegerField()
    failed = serializers.IntegerField()


class VerdictImportSummarySerializer(serializers.Serializer):
    project = serializers.CharField()
    task = serializers.CharField()
    judge = serializers.CharField()
    pairs = serializers.IntegerField()
    verdicts = serializers.IntegerField()
    choices = ChoiceCountsSerializer()
    seconds = serializers.FloatField()
    strict_mmrb2 = serializers.BooleanField(required=False)
    skipped_unknown_ids = serializers.IntegerField(required=False)
    matched_by_row = serializers.IntegerField(required=False, help_text="mjbench-scores")
