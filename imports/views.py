"""The lead's data pages: upload a file into a task (imported in the background, with live
progress), and send candidate pairs straight to annotation."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from content.importing.formats import SAMPLE_FILES
from content.models import Pair
from core.htmx import render_fragment_or_page
from core.page_errors import errors_on_form, refusal_as_message
from imports.forms import ImportForm
from imports.models import ImportJob
from imports.services.import_jobs import import_job_start
from projects.access import project_for_lead
from projects.models import Task
from setup.services import pairs_queue

RECENT_JOBS = 20
# What each sample file of the upload form holds (content/importing/formats.py).
SAMPLE_NAMES = {
    "native": gettext_lazy("Arbiter's native JSONL, with its images (zip)"),
    "mmrb2": gettext_lazy("MMRB2's JSON, with the experts' scores and images (zip)"),
    "mjbench": gettext_lazy("MJ-Bench's JSON rows, with images (zip)"),
    "parquet": gettext_lazy("Parquet, images inside (MMRB2's Hugging Face layout)"),
}


def _task_counts(project) -> list[dict]:
    rows = project.tasks.annotate(
        pair_count=Count("pairs"),
        candidates=Count("pairs", filter=Q(pairs__status=Pair.Status.CANDIDATE)),
        queued=Count(
            "pairs", filter=Q(pairs__status__in=[Pair.Status.QUEUED, Pair.Status.IN_PROGRESS])
        ),
    ).order_by("slug")
    return list(rows)


@login_required
@require_http_methods(["GET", "POST"])
def data_page(request, slug: str):
    project = project_for_lead(request.user, slug)
    form = ImportForm(project, request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with errors_on_form(form, "file"):  # a refused upload: beside the file
            job = import_job_start(
                project,
                request.user,
                data["file"],
                task_slug=data["task_slug"],
                file_format=data["file_format"],
                queue=data["destination"] == "queue",
            )
            job.refresh_from_db()
            if job.status == ImportJob.Status.DONE:
                messages.success(
                    request,
                    _("%(file)s: %(count)s pairs imported.")
                    % {"file": job.file_name, "count": job.pairs_written},
                )
            return redirect("project-data", slug=slug)
    jobs = ImportJob.objects.filter(project=project).select_related("requested_by")
    context = {
        "project": project,
        "form": form,
        "jobs": jobs[:RECENT_JOBS],
        "tasks": _task_counts(project),
        "running": any(not job.finished for job in jobs[:RECENT_JOBS]),
        "samples": [(SAMPLE_NAMES[name], f"samples/{file}") for name, file in SAMPLE_FILES.items()],
        "tab": "data",
    }
    status = 400 if request.method == "POST" else 200
    return render_fragment_or_page(
        request, "imports/_import_jobs.html", "imports/data.html", context, status
    )


@login_required
@require_POST
def queue_view(request, slug: str):
    """Queue the candidates of one task (`task` posted) or of the whole project."""
    project = project_for_lead(request.user, slug)
    task_slug = request.POST.get("task", "")
    task = get_object_or_404(Task, project=project, slug=task_slug) if task_slug else None
    with refusal_as_message(request, _("Not queued: ")):
        queued = pairs_queue(project, task=task)
        if task:
            sent = _("%(count)s candidate pairs of task %(task)s sent to annotation.")
        else:
            sent = _("%(count)s candidate pairs of the project sent to annotation.")
        messages.success(request, sent % {"count": queued, "task": task.name if task else ""})
    return redirect("project-data", slug=slug)
