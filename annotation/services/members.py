"""Project membership and what it grants."""

from django.contrib.auth.models import Group, Permission
from django.db import transaction

from annotation.models import Membership, Project

LEADS_GROUP = "Leads"
# Models a lead manages in the admin (rows scoped to their projects by the admin itself).
_LEAD_MODELS = {
    "annotation": [
        "project",
        "task",
        "membership",
        "pair",
        "prompt",
        "response",
        "assignment",
        "rating",
        "adjudication",
        "flag",
    ],
    "judging": ["judge", "judgerun", "verdict", "prompttemplate", "taskensemble"],
}


def leads_group() -> Group:
    group, _ = Group.objects.get_or_create(name=LEADS_GROUP)
    wanted = Permission.objects.none()
    for app_label, models in _LEAD_MODELS.items():
        wanted |= Permission.objects.filter(
            content_type__app_label=app_label, content_type__model__in=models
        ).exclude(codename__startswith="delete_")
    group.permissions.set(wanted)
    return group


@transaction.atomic
def membership_set(user, project: Project, role: str) -> Membership:
    """Make `user` an annotator or lead of `project`; a lead also gets the admin."""
    membership, _ = Membership.objects.update_or_create(
        user=user, project=project, defaults={"role": role}
    )
    if role == Membership.Role.LEAD:
        if not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        user.groups.add(leads_group())
    return membership
