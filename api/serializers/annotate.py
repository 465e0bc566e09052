"""The annotator's side: assignments (blinded), rating input, own ratings.

Scores speak of Left and Right, as the annotate page does: 1 = Left much better … K = Right
much better. The server maps them to the canonical orientation through the assignment's
`swapped`; nothing here says which side is A.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import Assignment, Rating
from annotation.services.ratings import MAX_RATIONALE_CHARS
from api.selectors import AssignmentView
from api.serializers.common import (
    AspectSerializer,
    ContentSerializer,
    PromptContentSerializer,
    content_parts,
    id_field,
)
from projects.scale import scale_labels, to_form


class TaskRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    name = serializers.CharField()
    project = serializers.IntegerField(source="project_id")
    project_slug = serializers.CharField(source="project.slug")


class AssignmentSerializer(serializers.ModelSerializer):
    task = TaskRefSerializer(source="pair.task")

    class Meta:
        model = Assignment
        fields = ["id", "task", "status", "lease_expires_at", "created_at", "submitted_at"]


class ScaleLabelSerializer(serializers.Serializer):
    value = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # a declared field; the stubs see Field.label


class OwnRatingValuesSerializer(serializers.Serializer):
    overall = serializers.IntegerField(help_text="1 = Left much better … K = Right much better")
    aspects = serializers.DictField(child=serializers.IntegerField())
    rationale = serializers.CharField(allow_blank=True)


def _form_values(rating: Rating, swapped: bool) -> dict:
    """A stored (canonical) rating back in the Left/Right orientation the annotator saw."""
    return {
        "overall": to_form(rating.overall, rating.scale, swapped),
        "aspects": {
            score.aspect: to_form(score.score, rating.scale, swapped)
            for score in rating.aspect_scores.all()
        },
        "rationale": rating.rationale,
    }


class AssignmentDetailSerializer(serializers.Serializer):
    """One assignment with its pair's content, blinded: no model names, no pair id, no other
    annotator's rating, no verdict. `left` and `right` are as the annotator rates them."""

    id = serializers.IntegerField()
    task = TaskRefSerializer()
    status = serializers.ChoiceField(choices=Assignment.Status.choices)
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    editable = serializers.BooleanField(help_text="whether a rating can still be (re)submitted")
    scale_points = serializers.IntegerField()
    scale_labels = ScaleLabelSerializer(many=True)
    aspects = AspectSerializer(many=True)
    guidelines = serializers.CharField(allow_blank=True, help_text="Markdown")
    prompt = PromptContentSerializer()
    left = ContentSerializer()
    right = ContentSerializer()
    rating = OwnRatingValuesSerializer(allow_null=True)

    @staticmethod
    def payload(view: AssignmentView, request) -> dict:
        """The plain data this serializer shapes."""
        assignment, assets = view.assignment, view.assets
        pair = assignment.pair
        task, project = pair.task, pair.project
        task.project = project  # no query for the task's project slug
        left, right = pair.response_a, pair.response_b
        if assignment.swapped:
            left, right = right, left
        guidelines = "\n\n".join(text for text in (project.guidelines, task.guidelines) if text)
        rating = getattr(assignment, "rating", None)  # none until the first submit
        return {
            "id": assignment.pk,
            "task": task,
            "status": assignment.status,
            "lease_expires_at": assignment.lease_expires_at,
            "created_at": assignment.created_at,
            "submitted_at": assignment.submitted_at,
            "editable": view.editable,
            "scale_points": project.scale_points,
            "scale_labels": [
                {"value": value, "label": label}
                for value, label in scale_labels(project.scale_points)
            ],
            "aspects": task.aspects,
            "guidelines": guidelines,
            "prompt": {
                "available": pair.prompt.content is not None,
                "content": content_parts(pair.prompt.content, assets, request),
            },
            "left": {"content": content_parts(left.content, assets, request)},
            "right": {"content": content_parts(right.content, assets, request)},
            "rating": None if rating is None else _form_values(rating, assignment.swapped),
        }


class ClaimSerializer(serializers.Serializer):
    assignment = AssignmentDetailSerializer(
        allow_null=True, help_text="null when nothing is left for you in this task"
    )


class AssignmentFilterSerializer(serializers.Serializer):
    task = id_field(required=False)
    status = serializers.ChoiceField(choices=Assignment.Status.choices, required=False)


class RatingInputSerializer(serializers.Serializer):
    """A rating in the Left/Right orientation of the assignment."""

    overall = serializers.IntegerField(
        min_value=1, max_value=11, help_text="1 = Left much better … K = Right much better"
    )
    aspects = serializers.DictField(
        child=serializers.IntegerField(min_value=1, max_value=11, allow_null=True),
        required=False,
        default=dict,
        help_text="{aspect key: score}, same orientation; optional",
    )
    rationale = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=MAX_RATIONALE_CHARS
    )
    active_seconds = serializers.FloatField(
        required=False, allow_null=True, min_value=0, max_value=10**9, default=None
    )


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000, help_text="Why you skip this pair.")


class RatingSerializer(serializers.ModelSerializer):
    """One of the caller's ratings, in the Left/Right orientation they rated in."""

    assignment = serializers.IntegerField(source="assignment_id")
    task = serializers.IntegerField(source="pair.task_id")
    values = serializers.SerializerMethodField()

    class Meta:
        model = Rating
        fields = [
            "id", "assignment", "task", "scale", "values", "active_seconds",
            "created_at", "updated_at",
        ]  # fmt: skip

    @extend_schema_field(OwnRatingValuesSerializer)
    def get_values(self, rating: Rating) -> dict:
        return _form_values(rating, rating.assignment.swapped)


class RatingFilterSerializer(serializers.Serializer):
    task = id_field(required=False)
