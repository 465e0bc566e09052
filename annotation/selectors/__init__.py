"""Reads for pages and commands: ready querysets, no writes. One module per noun; every
scope (who may see what) comes from projects/access.py and annotation/access.py; the pages
find here what they read, from this app and from projects/selectors.py."""

from annotation.selectors.assets import asset_for_user, assets_by_sha
from annotation.selectors.assignments import (
    FINISHED_STATUSES,
    RECENT_SHOWN,
    assignment_for_annotator,
    assignment_position,
    current_lease,
    last_finished,
    recent_submissions,
    task_of_assignment,
    undoable_skip,
)
from annotation.selectors.members import former_members, project_members
from annotation.selectors.pairs import (
    DECIDED_STATUSES,
    claimable_pairs,
    in_claim_order,
    latest_adjudications,
    live_assignments,
    rating_can_change,
)
from annotation.selectors.progress import TaskProgress, annotator_progress, next_task_for
from content.models.pair import OPEN_STATUSES
from projects.access import (
    is_lead_anywhere,
    project_for_lead,
    task_for_annotator,
    tasks_for_membership,
)
from projects.selectors import (
    invitation_for_token,
    invitation_in_project,
    invitation_used_by,
    may_create_projects,
    membership_in_project,
    memberships_for_user,
    project_open_invitations,
    projects_for_user,
)

__all__ = [
    "DECIDED_STATUSES",
    "FINISHED_STATUSES",
    "OPEN_STATUSES",
    "RECENT_SHOWN",
    "TaskProgress",
    "annotator_progress",
    "asset_for_user",
    "assets_by_sha",
    "assignment_for_annotator",
    "assignment_position",
    "claimable_pairs",
    "in_claim_order",
    "current_lease",
    "former_members",
    "invitation_for_token",
    "invitation_in_project",
    "invitation_used_by",
    "is_lead_anywhere",
    "last_finished",
    "latest_adjudications",
    "live_assignments",
    "may_create_projects",
    "membership_in_project",
    "memberships_for_user",
    "next_task_for",
    "project_for_lead",
    "project_members",
    "project_open_invitations",
    "projects_for_user",
    "rating_can_change",
    "recent_submissions",
    "task_for_annotator",
    "task_of_assignment",
    "tasks_for_membership",
    "undoable_skip",
]
