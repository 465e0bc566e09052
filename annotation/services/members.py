"""Removing a member from a project: the membership goes (projects/services/members.py says
what it grants), their assignments and ratings stay and keep counting, and their live leases
end now so that the pairs go to someone else."""

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment
from projects.models import Membership
from projects.services.members import lead_kept_check


def membership_deactivate(*, membership: Membership) -> int:
    """Remove a member from the project: the membership goes, their ratings stay (they count
    in every metric, as before), their live leases end now. Returns the leases ended."""
    with transaction.atomic():
        lead_kept_check(membership.project, membership)
        ended = Assignment.objects.filter(
            annotator_id=membership.user_id,
            pair__project=membership.project,
            status=Assignment.Status.LEASED,
            lease_expires_at__gt=timezone.now(),
        ).update(lease_expires_at=timezone.now())
        membership.delete()
    return ended
