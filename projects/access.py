"""Who may see what: the access policy (docs/architecture.md §8). This module holds the
project and task scopes; `annotation/access.py` builds the pair, assignment and rating scopes
on them. Pages, the API, judging, exports and the dashboards take every scope from these two;
none writes its own.

- The operator (superuser) leads every project.
- A lead sees everything of the projects they lead, the judges of those projects and the
  operator's (a judge with no project).
- A member (any role) may annotate the tasks their membership names, or every task of the
  project when it names none.
- An annotator reaches only their own assignments and ratings, and only while they still
  belong to the project; a placeholder account (imported ratings) reaches nothing.

- An API token scoped to one project (projects/services/api_tokens.py) narrows every scope
  here to that project, for the request it authenticates (`limit_to_project`): the user's
  rights stay their own, only the projects they reach are fewer. The narrowing is applied in
  the roots every scope grows from: the user's memberships (`memberships_of`), their projects
  (`_within_limit`) and the operator's (`_operator_projects`, `operator_wide`).

Out of scope answers exactly like missing: callers narrow their queryset with these scopes
before looking an id up, never look up first and check after. Plain reads: no service, no
write (the "Selectors read" import contract covers this module).
"""

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404

from projects.models import Membership, Project, Task

# Whom the policy answers for: a request's user, signed in or not (an anonymous visitor is no
# member and no operator, so every scope is empty for them).
AnyUser = User | AnonymousUser


def signed_in(user: AnyUser) -> User:
    """The request's user as the account a service acts for: behind `login_required` always
    one; an anonymous visitor is refused (403) rather than handed on."""
    if isinstance(user, AnonymousUser):
        raise PermissionDenied("sign in first")
    return user


# The one project an API token may be limited to

_ONLY_PROJECT = "_arbiter_only_project"


def limit_to_project(user: AnyUser, project_id: int) -> None:
    """Narrow every scope of this user object to one project. The API's token authentication
    calls it on the user it loaded for one request (api/authentication.py); a session's user
    is never limited."""
    setattr(user, _ONLY_PROJECT, project_id)


# The member's quotas, read with the task their claim is for (annotation/services/quotas.py)

_CLAIMER_QUOTAS = "_arbiter_claimer_quotas"


def claimer_quotas_keep(
    task: Task, user_id: int, project_quota: int | None, task_quota: int | None
) -> None:
    """Keep on the task object the quotas of the member about to claim in it, so that the
    claim reads none again."""
    setattr(task, _CLAIMER_QUOTAS, (user_id, project_quota, task_quota))


def claimer_quotas(task: Task, user_id: int) -> tuple[int | None, int | None] | None:
    """The quotas kept on the task for this user, or None when none were kept."""
    kept = getattr(task, _CLAIMER_QUOTAS, None)
    if kept is None or kept[0] != user_id:
        return None
    return kept[1], kept[2]


def only_project(user: AnyUser) -> int | None:
    """The project this user object is limited to, or None."""
    return getattr(user, _ONLY_PROJECT, None)


def operator_wide(user: AnyUser) -> bool:
    """Whether the user reaches everything: an operator not limited to a project."""
    return user.is_superuser and only_project(user) is None


def memberships_of(user: AnyUser) -> QuerySet[Membership]:
    """The user's memberships, within the project they are limited to (the root of every
    member's scope)."""
    if isinstance(user, AnonymousUser):  # a filter on it would raise, not find nothing
        return Membership.objects.none()
    memberships = Membership.objects.filter(user=user)
    limit = only_project(user)
    return memberships if limit is None else memberships.filter(project_id=limit)


def _within_limit(user: AnyUser, projects: QuerySet[Project]) -> QuerySet[Project]:
    limit = only_project(user)
    return projects if limit is None else projects.filter(pk=limit)


def _operator_projects(user: AnyUser) -> QuerySet[Project]:
    return _within_limit(user, Project.objects.all())


# Projects


def member_projects(user: AnyUser) -> QuerySet[Project]:
    """The projects the user belongs to, in any role (every project for the operator)."""
    if user.is_superuser:
        return _operator_projects(user)
    if isinstance(user, AnonymousUser):
        return Project.objects.none()
    return _within_limit(user, Project.objects.filter(memberships__user=user).distinct())


def led_projects(user: AnyUser) -> QuerySet[Project]:
    """The projects the user leads (every project for the operator)."""
    if user.is_superuser:
        return _operator_projects(user)
    if isinstance(user, AnonymousUser):
        return Project.objects.none()
    led = Project.objects.filter(memberships__user=user, memberships__role=Membership.Role.LEAD)
    return _within_limit(user, led)


# Kept on the user object, as Django's ModelBackend keeps `_perm_cache`: a request's user is
# loaded afresh, so the answer lives for one request; a page that found the user leading its
# project (`project_for_lead`) spares the header's menu the question.
_LEADS_A_PROJECT = "_arbiter_leads_a_project"


def is_lead_anywhere(user: AnyUser) -> bool:
    known = getattr(user, _LEADS_A_PROJECT, None)
    if known is not None:
        return bool(known)
    if user.is_superuser:
        leads = only_project(user) is None or _operator_projects(user).exists()
    else:
        leads = memberships_of(user).filter(role=Membership.Role.LEAD).exists()
    setattr(user, _LEADS_A_PROJECT, leads)
    return leads


def project_roles(user: AnyUser) -> dict[int, str]:
    """The user's role per project id, from their memberships (read it through `role_in`)."""
    return dict(memberships_of(user).values_list("project", "role"))


def role_in(user: AnyUser, project_id: int, roles: dict[int, str]) -> str:
    """The user's role in a project they can see: the operator leads every project, member or
    not; anyone else has their membership's role (`roles` from `project_roles`)."""
    if user.is_superuser:
        return Membership.Role.LEAD
    return roles.get(project_id, Membership.Role.ANNOTATOR)


def project_for_lead(user: AnyUser, slug: str) -> Project:
    """A project the user leads (superusers lead every project). 403 for the project's
    annotators (they know it exists); for anyone else the same 404 as a project that does
    not exist, so that slugs cannot be probed."""
    project = _operator_projects(user).filter(slug=slug).first()
    role = None
    if project is not None and not user.is_superuser:
        membership = memberships_of(user).filter(project=project).first()
        role = membership.role if membership else None
    if project is None or (role is None and not user.is_superuser):
        raise Http404("no such project")
    if role not in (None, Membership.Role.LEAD):
        raise PermissionDenied("only the project's leads may see this page")
    setattr(user, _LEADS_A_PROJECT, True)
    return project


def led_project_or_404(user: AnyUser, slug: str) -> Project:
    """A project the user leads; for anyone else, its annotators included, the 404 of a
    project that does not exist (pages whose very existence is the leads' business)."""
    project = led_projects(user).filter(slug=slug).first()
    if project is None:
        raise Http404("no such project")
    setattr(user, _LEADS_A_PROJECT, True)
    return project


def led_or_operator_wide(user: AnyUser) -> Q:
    """Rows (judges) of the projects the user leads and the operator's own, which have no
    project; every row for the operator."""
    if operator_wide(user):
        return Q()
    return Q(project__in=led_projects(user)) | Q(project__isnull=True)


def project_or_operator_wide(project: Project) -> Q:
    """Rows (judges) a project's leads see and use: the project's own and the operator's."""
    return Q(project=project) | Q(project__isnull=True)


# Tasks a membership covers


def tasks_for_membership(membership: Membership) -> list[Task]:
    """The tasks a member may annotate: those the membership names, else all of the project's
    (in Python, from a prefetched membership; `covers_task` is the same rule in SQL); never an
    archived one (a membership naming only archived tasks covers none, not all)."""
    limited = list(membership.tasks.all())
    if limited:
        return sorted((t for t in limited if t.archived_at is None), key=lambda t: t.slug)
    return list(Task.objects.active().filter(project=membership.project).order_by("slug"))


def members_by_task(project: Project, tasks: list[Task]) -> dict[int, set[int]]:
    """The members (user ids, any role) each of the project's tasks is open to: two queries
    whatever the number of members."""
    by_task: dict[int, set[int]] = {task.pk: set() for task in tasks}
    for membership in Membership.objects.filter(project=project).prefetch_related("tasks"):
        named = [task.pk for task in membership.tasks.all()]
        for task_id in named or list(by_task):
            by_task.setdefault(task_id, set()).add(membership.user_id)
    return by_task


def covers_task(user: AnyUser, *, project: str = "project", task: str = "pk") -> Q:
    """Rows whose task a membership of the user lets them annotate (any role): the tasks it
    names, or every task of the project when it names none. `project` and `task` name the
    row's fields (a task itself by default; `task="task"` for a pair)."""
    mine = memberships_of(user).filter(project=OuterRef(project))
    return Q(Exists(mine.filter(tasks__isnull=True))) | Q(Exists(mine.filter(tasks=OuterRef(task))))


def annotatable_tasks(user: AnyUser) -> QuerySet[Task]:
    """Tasks the user may claim pairs of: covered by a membership, not archived."""
    return Task.objects.active().filter(covers_task(user))


def visible_tasks(user: AnyUser) -> QuerySet[Task]:
    """Tasks of the projects the user leads (archived ones too), and those they may annotate
    (not archived)."""
    if user.is_superuser:
        return Task.objects.filter(project__in=_operator_projects(user))
    leads = memberships_of(user).filter(project=OuterRef("project"), role=Membership.Role.LEAD)
    annotated = covers_task(user) & Q(archived_at__isnull=True)
    return Task.objects.filter(Q(Exists(leads)) | annotated)


def task_for_annotator(user: AnyUser, project_slug: str, task_slug: str) -> Task:
    """A task the user may annotate, or 404."""
    membership = (
        memberships_of(user).filter(project__slug=project_slug).select_related("project").first()
    )
    if membership is None:
        raise Http404("no such task")
    for task in tasks_for_membership(membership):
        if task.slug == task_slug:
            task.project = membership.project
            # The claim reads the member's quotas from here (annotation/services/quotas.py).
            claimer_quotas_keep(
                task, membership.user_id, membership.project_quota, membership.task_quota
            )
            return task
    raise Http404("no such task")
