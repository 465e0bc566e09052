"""Project membership and what it grants."""

from django.db import transaction

from annotation.models import Membership, Project


@transaction.atomic
def membership_set(user, project: Project, role: str) -> Membership:
    """Make `user` an annotator or lead of `project`. A lead works in Arbiter's own pages,
    scoped to the projects they lead; the Django admin is for operators only."""
    membership, _ = Membership.objects.update_or_create(
        user=user, project=project, defaults={"role": role}
    )
    return membership
