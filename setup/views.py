"""The lead's setup pages: create a project, change its settings, add and edit its tasks."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Rating
from content.rendering import guidelines_html
from core.page_errors import errors_on_form, refusal_as_message
from projects.access import project_for_lead
from projects.models import Task
from projects.selectors import may_create_projects
from projects.services.tasks import task_archive, task_delete, task_restore
from setup.forms import ProjectForm, TaskForm
from setup.services import (
    aspects_parse,
    default_aspects,
    project_create,
    project_update,
    task_save,
)


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request):
    if not may_create_projects(request.user):
        raise PermissionDenied(_("ask an operator for a lead account that may create projects"))
    initial = {"scale_points": 7, "scale_from_first_file": True}
    form = ProjectForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        with errors_on_form(form):
            project = project_create(
                creator=request.user, slug=form.cleaned_data["slug"], **form.values()
            )
            messages.success(
                request,
                _("Project %(name)s created. Add its first task.") % {"name": project.name},
            )
            return redirect("task-new", slug=project.slug)
    status = 400 if request.method == "POST" else 200
    return render(request, "setup/project_form.html", {"form": form}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request, slug: str):
    project = project_for_lead(request.user, slug)
    form = ProjectForm(request.POST or None, instance=project, editing=True)
    if request.method == "POST" and form.is_valid():
        with errors_on_form(form):
            changed = project_update(project, **form.values())
            if changed:
                messages.success(
                    request,
                    _("Settings saved. %(count)s pairs changed status under the new rules.")
                    % {"count": changed},
                )
            else:
                messages.success(request, _("Settings saved."))
            return redirect("project-settings", slug=slug)
    project.refresh_from_db()
    rated = Rating.objects.filter(pair__project=project).exists()
    tasks = project.tasks.annotate(pair_count=Count("pairs")).order_by("slug")
    context = {"project": project, "form": form, "rated": rated, "tasks": tasks}
    status = 400 if request.method == "POST" else 200
    return render(request, "setup/project_settings.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def task_edit(request, slug: str, task_slug: str | None = None):
    project = project_for_lead(request.user, slug)
    with_counts = Task.objects.annotate(pair_count=Count("pairs"))
    task = get_object_or_404(with_counts, project=project, slug=task_slug) if task_slug else None
    if task is not None:
        form = TaskForm.for_task(task, request.POST or None)
    else:
        columns = {field.name: field for field in Task._meta.concrete_fields}
        defaults = {name: columns[name].default for name in TaskForm.QUALITY_FIELDS}
        form = TaskForm(request.POST or None, initial={"kind": Task.Kind.T2I, **defaults})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with errors_on_form(form):
            aspects = (
                aspects_parse(data["aspects"])
                if data["aspects"].strip() or task is not None
                else default_aspects(data["kind"])
            )
            saved = task_save(
                project,
                task=task,
                slug=data["slug"],
                name=data["name"],
                kind=data["kind"],
                aspects=aspects,
                guidelines=data["guidelines"],
                quality=form.quality_settings(),
            )
            messages.success(request, _("Task %(name)s saved.") % {"name": saved.name})
            return redirect("project-settings", slug=slug)
    context = {"project": project, "task": task, "form": form}
    status = 400 if request.method == "POST" else 200
    return render(request, "setup/task_form.html", context, status=status)


@login_required
@require_POST
def guidelines_preview(request, slug: str):
    """The Markdown of a guidelines field as annotators will see it (htmx, from the forms)."""
    project_for_lead(request.user, slug)
    text = request.POST.get("guidelines", "")[:100_000]
    html = guidelines_html(text) if text.strip() else ""
    if not html:
        html = format_html('<p class="muted">{}</p>', _("Nothing to preview."))
    return HttpResponse(html)


def _lead_task(request, slug: str, task_slug: str) -> tuple:
    """The project the user leads and one of its tasks, or 404 (another project's task
    answers like a missing one)."""
    project = project_for_lead(request.user, slug)
    return project, get_object_or_404(Task, project=project, slug=task_slug)


@login_required
@require_POST
def task_delete_view(request, slug: str, task_slug: str):
    """Delete a task with no pairs (the settings page asks first)."""
    project, task = _lead_task(request, slug, task_slug)
    with refusal_as_message(request, _("Not deleted: ")):
        task_delete(project=project, task=task)
        messages.success(request, _("Task %(name)s deleted.") % {"name": task.name})
    return redirect("project-settings", slug=slug)


@login_required
@require_POST
def task_archive_view(request, slug: str, task_slug: str):
    """Archive a task: hidden from annotators and imports, kept with its data."""
    project, task = _lead_task(request, slug, task_slug)
    task_archive(project=project, task=task, user=request.user)
    messages.success(
        request,
        _(
            "Task %(name)s archived: annotators no longer see it and imports refuse it. "
            "Its pairs and ratings are kept; restore it below."
        )
        % {"name": task.name},
    )
    return redirect("project-settings", slug=slug)


@login_required
@require_POST
def task_restore_view(request, slug: str, task_slug: str):
    project, task = _lead_task(request, slug, task_slug)
    task_restore(project=project, task=task)
    messages.success(
        request,
        _("Task %(name)s restored: annotators and imports see it again.") % {"name": task.name},
    )
    return redirect("project-settings", slug=slug)
