"""Pairs, for their leads: list, un-blinded detail, bulk import."""

from rest_framework import serializers

from annotation.models import Adjudication, Rating
from api.serializers.common import (
    ContentPartSerializer,
    PromptContentSerializer,
    content_parts,
    ref_field,
)
from content.importing.formats import FORMATS as IMPORT_FORMATS
from content.models import Pair, Side


class PairSerializer(serializers.ModelSerializer):
    task = serializers.IntegerField(source="task_id")
    task_slug = serializers.CharField(source="task.slug")
    project = serializers.IntegerField(source="project_id")

    class Meta:
        model = Pair
        fields = [
            "id", "project", "task", "task_slug", "external_id", "source", "status", "label",
            "decided_by", "reference_label", "rating_count", "consensus_mean",
            "consensus_span", "extra_annotators", "same_model", "created_at", "updated_at",
        ]  # fmt: skip


class LeadRatingSerializer(serializers.ModelSerializer):
    """A rating as its project's leads see it: canonical (above the centre = A better)."""

    annotator = serializers.CharField(source="annotator.username")
    aspects = serializers.DictField(child=serializers.IntegerField())

    class Meta:
        model = Rating
        fields = [
            "id", "annotator", "scale", "overall", "aspects", "rationale", "active_seconds",
            "imported", "created_at",
        ]  # fmt: skip


class AdjudicationSerializer(serializers.ModelSerializer):
    lead = serializers.CharField(source="lead.username")

    class Meta:
        model = Adjudication
        fields = ["id", "lead", "decision", "note", "created_at"]


class ResponseSerializer(serializers.Serializer):
    model_name = serializers.CharField()
    content = ContentPartSerializer(many=True)
    grades = serializers.ListField(child=serializers.CharField())


class RatingsSummarySerializer(serializers.Serializer):
    count = serializers.IntegerField()
    needed = serializers.IntegerField(help_text="N + extra annotators")
    mean = serializers.FloatField(allow_null=True)
    span = serializers.IntegerField(allow_null=True)
    ratings = LeadRatingSerializer(many=True)


class PairDetailSerializer(PairSerializer):
    """A pair un-blinded for its leads; `detail` is set on the pair by the view
    (`pair_detail_payload`)."""

    metadata = serializers.JSONField()
    prompt = PromptContentSerializer(source="detail.prompt")
    response_a = ResponseSerializer(source="detail.response_a")
    response_b = ResponseSerializer(source="detail.response_b")
    ratings = RatingsSummarySerializer(source="detail.ratings")
    adjudications = AdjudicationSerializer(many=True)

    class Meta(PairSerializer.Meta):
        fields = [
            *PairSerializer.Meta.fields,
            "metadata",
            "prompt",
            "response_a",
            "response_b",
            "ratings",
            "adjudications",
        ]


class PairFilterSerializer(serializers.Serializer):
    project = ref_field(required=False)
    task = serializers.SlugField(required=False, max_length=64, help_text="Task slug.")
    status = serializers.ChoiceField(choices=Pair.Status.choices, required=False)
    label = serializers.ChoiceField(  # type: ignore[assignment]  # a declared field; the stubs see Field.label
        choices=[*Side.values, "none"], required=False, help_text="A, B, or none (no label)"
    )
    decided_by = serializers.ChoiceField(
        choices=["consensus", "adjudication", "imported", "none"], required=False
    )
    source = serializers.CharField(required=False, max_length=200)  # type: ignore[assignment]  # a declared field; the stubs see Field.source


class PairImportSerializer(serializers.Serializer):
    project = ref_field()
    task = serializers.SlugField(max_length=64, help_text="Task slug (created when missing).")
    format = serializers.ChoiceField(
        choices=IMPORT_FORMATS,
        required=False,
        allow_null=True,
        default=None,
        help_text="native, mmrb2 or mjbench for .jsonl/.json, parquet for .parquet; "
        "absent: parquet or native by the file's extension",
    )
    as_candidates = serializers.BooleanField(
        default=False, help_text="labelled records go through the annotation pipeline"
    )
    file = serializers.FileField(
        help_text="A .jsonl/.json file (no images), a .parquet file (images inside) or a .zip "
        "of one data file and the images it names"
    )


class CountsSerializer(serializers.Serializer):
    new = serializers.IntegerField()
    reused = serializers.IntegerField()


class ImportSummarySerializer(serializers.Serializer):
    project = serializers.CharField()
    task = serializers.CharField()
    format = serializers.CharField()
    records = serializers.IntegerField()
    pairs = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    prompts = CountsSerializer()
    responses = serializers.IntegerField()
    images = CountsSerializer()
    ratings = serializers.IntegerField()
    graded_responses = serializers.IntegerField()
    statuses = serializers.DictField(child=serializers.IntegerField())
    gold = serializers.IntegerField(help_text="pairs made gold checks by the file's gold field")
    seconds = serializers.FloatField()


def pair_detail_payload(pair: Pair, assets: dict, request) -> dict:
    """The parts of a pair's detail that are not plain columns."""

    def response(resp) -> dict:
        return {
            "model_name": resp.generator.name,
            "content": content_parts(resp.content, assets, request),
            "grades": [str(grade) for grade in resp.imported_grades or []],
        }

    ratings = list(pair.ratings.all())  # LeadRatingSerializer reads each one's `aspects`
    return {
        "prompt": {
            "available": pair.prompt.content is not None,
            "content": content_parts(pair.prompt.content, assets, request),
        },
        "response_a": response(pair.response_a),
        "response_b": response(pair.response_b),
        "ratings": {
            "count": len(ratings),
            "needed": pair.ratings_needed(),
            # Stored with the ratings (consensus.py::decision_set), over the same ratings.
            "mean": pair.consensus_mean,
            "span": pair.consensus_span,
            "ratings": ratings,
        },
    }
