"""The annotator's API: claim the next pair of a task, read it (blinded), rate or skip it (and
undo the last skip), list one's own assignments and ratings. Nobody sees anyone else's."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.services.assignments import assignment_claim, assignment_skip
from annotation.services.ratings import RatingInput, rating_submit
from annotation.services.skip_undo import assignment_undo
from api.selectors import assignment_view, own_assignments, own_ratings
from api.serializers.annotate import (
    AssignmentDetailSerializer,
    AssignmentFilterSerializer,
    AssignmentSerializer,
    ClaimSerializer,
    RatingFilterSerializer,
    RatingInputSerializer,
    RatingSerializer,
    SkipSerializer,
)
from api.serializers.common import ErrorSerializer
from api.views.common import ScopedViewSet
from projects.access import annotatable_tasks

CONFLICT = OpenApiResponse(ErrorSerializer, description="The assignment cannot take this now.")


def _detail(request, assignment_id: int) -> dict:
    view = assignment_view(request.user, assignment_id)
    return AssignmentDetailSerializer(AssignmentDetailSerializer.payload(view, request)).data


class TaskClaimViewSet(ScopedViewSet):
    serializer_class = ClaimSerializer

    def get_queryset(self):
        return annotatable_tasks(self.request.user).select_related("project")

    @extend_schema(
        summary="Your next pair in this task: your current one if you have one, else a new "
        "claim; `assignment` is null when nothing is left for you",
        request=None,
        responses={200: ClaimSerializer},
    )
    @action(detail=True, methods=["post"])
    def claim(self, request, pk=None):
        task = self.get_object()
        assignment = assignment_claim(request.user, task)
        if assignment is None:
            return Response({"assignment": None})
        return Response({"assignment": _detail(request, assignment.pk)})


@extend_schema_view(
    list=extend_schema(summary="Your assignments (newest first)"),
    retrieve=extend_schema(
        summary="One of your assignments with its pair, blinded (left/right as you rate them)",
        responses={200: AssignmentDetailSerializer},
    ),
)
class AssignmentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = AssignmentSerializer
    filter_serializer_class = AssignmentFilterSerializer

    def get_queryset(self):
        return own_assignments(self.request.user)

    def list(self, request):
        assignments, filters = self.get_queryset(), self.filters()
        if "task" in filters:
            assignments = assignments.filter(pair__task_id=filters["task"])
        if "status" in filters:
            assignments = assignments.filter(status=filters["status"])
        return self.paged(assignments)

    def retrieve(self, request, pk=None):
        return Response(_detail(request, self.get_object().pk))

    @extend_schema(
        summary="Rate the pair (or change your rating while the pair is still open)",
        description="Scores in your Left/Right orientation: 1 = Left much better … K = Right "
        "much better. A repeated submit stores one rating.",
        request=RatingInputSerializer,
        responses={200: RatingSerializer, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def rating(self, request, pk=None):
        assignment = self.get_object()  # 404 unless it is yours
        serializer = RatingInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        rating = rating_submit(
            assignment.pk, request.user, RatingInput(**serializer.validated_data)
        )
        rating = own_ratings(request.user).get(pk=rating.pk)
        return Response(RatingSerializer(rating, context=self.get_serializer_context()).data)

    @extend_schema(
        summary="Give the pair back without rating it (you will not get it again)",
        request=SkipSerializer,
        responses={200: AssignmentSerializer, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def skip(self, request, pk=None):
        assignment = self.get_object()
        serializer = SkipSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        assignment_skip(assignment.pk, request.user, serializer.validated_data["reason"])
        return Response(AssignmentSerializer(self.get_object()).data)

    @extend_schema(
        summary="Take back your last skip (or flag) of this pair: it is yours again, next",
        description="Only your last action in the task, within the project's grace period for "
        "correcting a rating, while the pair is still being annotated and has a place for you; "
        "a flag only before a lead acted on it. Otherwise 409 with the reason.",
        request=None,
        responses={200: AssignmentSerializer, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def undo(self, request, pk=None):
        assignment = self.get_object()  # 404 unless it is yours
        assignment_undo(assignment_id=assignment.pk, user=request.user)
        return Response(AssignmentSerializer(self.get_object()).data)


@extend_schema_view(
    list=extend_schema(summary="Your ratings (newest first), in the orientation you rated"),
    retrieve=extend_schema(summary="One of your ratings"),
)
class RatingViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = RatingSerializer
    filter_serializer_class = RatingFilterSerializer

    def get_queryset(self):
        return own_ratings(self.request.user)

    def list(self, request):
        ratings, filters = self.get_queryset(), self.filters()
        if "task" in filters:
            ratings = ratings.filter(pair__task_id=filters["task"])
        return self.paged(ratings)
