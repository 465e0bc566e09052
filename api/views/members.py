"""A project's members and pairs in progress (leads only), as on its members page: add an
existing account (no link), change a member's quotas, give a stuck pair back to the pool.

Every URL names a project the caller leads (else 404, like a missing one: annotators, other
projects' leads, a token limited to another project), then ids inside that project only.
Adding answers the same words after the same time whether or not an account matched, and
counts against the lead's hourly limit shared with the page (projects/services/
member_add_limits.py): the answer never says who has an account here."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.mixins import ListModelMixin
from rest_framework.response import Response

from annotation.models import Assignment
from annotation.selectors.members import project_leases
from annotation.services.assignments import assignment_release
from api.selectors import parse_id, project_memberships
from api.serializers.common import ErrorSerializer
from api.serializers.members import (
    LeaseSerializer,
    MemberAddedSerializer,
    MemberAddSerializer,
    MembershipQuotasSerializer,
    MembershipSerializer,
)
from api.views.common import object_or_404, project_or_404
from projects.access import led_projects
from projects.models import Membership
from projects.services.member_add_limits import membership_add_paced
from projects.services.members import membership_quotas_set

PROJECT = OpenApiParameter("project", str, OpenApiParameter.PATH, description="Project id or slug.")
MEMBER = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Membership id.")
LEASE = OpenApiParameter(
    "id", int, OpenApiParameter.PATH, description="The pair in progress's assignment id."
)

ADDED = (
    "If an account has exactly this username or e-mail and was not a member yet, it is now a "
    "member of the project (an existing member keeps their role). Nothing is sent to them: "
    "tell them."
)


class _LeadProject(GenericAPIView):
    """A project the caller leads, named in the URL: 404 for anyone else."""

    def project(self):
        return project_or_404(led_projects(self.request.user), self.kwargs["project"])


class MemberListView(ListModelMixin, _LeadProject):
    """The project's members; a lead adds an existing account here."""

    queryset = Membership.objects.none()  # the model, for the schema
    serializer_class = MembershipSerializer

    def get_queryset(self):
        return project_memberships(self.project())

    @extend_schema(
        summary="The project's members (leads first), their tasks and quotas; leads only",
        parameters=[PROJECT],
    )
    def get(self, request, project):
        return self.list(request)

    @extend_schema(
        summary="Add an existing account by its exact username or e-mail (no link); leads only",
        description=(
            "The same 202 and words after at least 0.3 s whether or not an account matched: "
            "no account, a disabled one, an e-mail shared by several accounts and an existing "
            "member (whose role stays) all add no one. At most 30 additions per lead and hour, "
            "with the members page (then 429 with `Retry-After`)."
        ),
        parameters=[PROJECT],
        request=MemberAddSerializer,
        responses={
            202: MemberAddedSerializer,
            429: OpenApiResponse(
                ErrorSerializer, description="Too many additions this hour; retry after it."
            ),
        },
    )
    def post(self, request, project):
        found = self.project()
        body = MemberAddSerializer(data=request.data, context={"project": found})
        body.is_valid(raise_exception=True)
        data = body.validated_data
        membership_add_paced(
            project=found,
            lead_id=request.user.pk,
            identifier=data["identifier"],
            role=data["role"],
            tasks=data["tasks"],
        )
        return Response({"detail": ADDED}, status=status.HTTP_202_ACCEPTED)


class MemberDetailView(_LeadProject):
    """A membership of the project (another project's id: 404, like a missing one)."""

    queryset = Membership.objects.none()
    serializer_class = MembershipSerializer

    def get_object(self):
        return object_or_404(project_memberships(self.project()), self.kwargs["id"])

    @extend_schema(summary="One member of the project; leads only", parameters=[PROJECT, MEMBER])
    def get(self, request, project, id):
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(
        summary="Change a member's quotas (the next claim reads them); leads only",
        parameters=[PROJECT, MEMBER],
        request=MembershipQuotasSerializer,
        responses={200: MembershipSerializer},
    )
    def patch(self, request, project, id):
        membership = self.get_object()
        body = MembershipQuotasSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        quotas = {
            "project_quota": membership.project_quota,
            "task_quota": membership.task_quota,
            **body.validated_data,
        }
        membership_quotas_set(membership=membership, **quotas)
        return Response(self.get_serializer(membership).data)


class LeaseListView(ListModelMixin, _LeadProject):
    """The pairs annotators hold now, as the members page lists them."""

    queryset = Assignment.objects.none()
    serializer_class = LeaseSerializer

    def get_queryset(self):
        return project_leases(self.project())  # a list: one query, then paged

    @extend_schema(
        summary="The project's pairs in progress (oldest first), each with its annotator; "
        "leads only",
        parameters=[PROJECT],
    )
    def get(self, request, project):
        return self.list(request)


class LeaseReleaseView(_LeadProject):
    """A pair in progress given back to the pool (annotation/services/assignments.py)."""

    queryset = Assignment.objects.none()
    serializer_class = LeaseSerializer

    @extend_schema(
        summary="Give a pair in progress back to the pool (its annotator no longer holds it "
        "and never gets it again); leads only",
        description="404 for an id that is not a pair in progress of this project (another "
        "project's, one submitted, skipped or released), exactly like a missing one.",
        parameters=[PROJECT, LEASE],
        request=None,
        responses={200: LeaseSerializer},
    )
    def post(self, request, project, id):
        found = self.project()
        # No assignment has id 0: a malformed id is answered by the service as a missing one.
        released = assignment_release(
            project=found, assignment_id=parse_id(id) or 0, by=request.user
        )
        return Response(self.get_serializer(released).data)
