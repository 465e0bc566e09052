"""The lead's judging pages: judges, runs with live progress, the ensemble filter."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Task
from annotation.selectors import is_lead_anywhere, project_for_lead
from judging.forms import EnsembleForm, JudgeForm, RunStartForm
from judging.models import Judge, JudgeRun
from judging.selectors import callable_judges, run_progress, runs_with_tallies
from judging.services.ensemble import (
    ensemble_of,
    ensemble_set,
    ensemble_start,
    ensemble_summary,
    last_filtered_pairs,
)
from judging.services.runs import (
    RunRefused,
    judge_run_cancel,
    judge_run_resume,
    judge_run_start,
)


def _lead_anywhere(user) -> None:
    if not is_lead_anywhere(user):
        raise PermissionDenied("only leads manage judges")


@login_required
def judge_list(request):
    _lead_anywhere(request.user)
    return render(request, "judging/judges.html", {"judges": Judge.objects.all()})


@login_required
@require_http_methods(["GET", "POST"])
def judge_edit(request, judge_id: int | None = None):
    """Create or edit a judge (saved through the form's validation, like judge_add)."""
    _lead_anywhere(request.user)
    judge = get_object_or_404(Judge, pk=judge_id) if judge_id else None
    form = JudgeForm(request.POST or None, instance=judge)
    if request.method == "POST" and form.is_valid():
        saved = form.save()
        messages.success(request, f"Judge {saved.name} saved.")
        return redirect("judge-list")
    status = 400 if request.method == "POST" else 200
    return render(request, "judging/judge_form.html", {"form": form, "judge": judge}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def run_list(request, slug: str):
    project = project_for_lead(request.user, slug)
    form = RunStartForm(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = judge_run_start(
                form.cleaned_data["judge"],
                project,
                task=form.cleaned_data["task"],
                samples=form.cleaned_data["samples"],
                user=request.user,
                background=True,
            )
        except RunRefused as refused:
            form.add_error(None, str(refused))
        else:
            return redirect("run-detail", slug=project.slug, run_id=run.pk)
    runs = runs_with_tallies(project)
    status = 400 if form.errors else 200
    context = {"project": project, "form": form, "runs": runs}
    return render(request, "judging/runs.html", context, status=status)


def _run_of(request, slug: str, run_id: int) -> JudgeRun:
    project = project_for_lead(request.user, slug)
    return get_object_or_404(
        JudgeRun.objects.select_related("judge", "task"), pk=run_id, project=project
    )


@login_required
def run_detail(request, slug: str, run_id: int):
    run = _run_of(request, slug, run_id)
    template = "judging/_progress.html" if request.headers.get("HX-Request") else "judging/run.html"
    return render(request, template, {"project": run.project, "progress": run_progress(run)})


@login_required
@require_POST
def run_control(request, slug: str, run_id: int, action: str):
    run = _run_of(request, slug, run_id)
    try:
        if action == "cancel":
            judge_run_cancel(run)
        else:
            judge_run_resume(run, background=True)
    except RunRefused as refused:
        messages.error(request, str(refused))
    return redirect("run-detail", slug=slug, run_id=run.pk)


@login_required
@require_http_methods(["GET", "POST"])
def ensemble(request, slug: str):
    """Per task: which judges form the ensemble, its threshold, and what it removed."""
    project = project_for_lead(request.user, slug)
    tasks = list(Task.objects.filter(project=project).order_by("slug"))
    if request.method == "POST":
        task = get_object_or_404(Task, project=project, slug=request.POST.get("task"))
        return _ensemble_post(request, project, task)
    rows = []
    for task in tasks:
        current = ensemble_of(task)
        initial = {
            "judges": list(current.judges.all()) if current else [],
            "threshold": current.threshold if current else None,
        }
        pairs = last_filtered_pairs(task)
        rows.append(
            {
                "task": task,
                "form": EnsembleForm(initial=initial, prefix=task.slug),
                "summary": ensemble_summary(task, pairs) if pairs else None,
                "candidates": task.pairs.filter(status="candidate").count(),
            }
        )
    judges = callable_judges()
    return render(
        request, "judging/ensemble.html", {"project": project, "rows": rows, "judges": judges}
    )


def _ensemble_post(request, project, task):
    if request.POST.get("action") == "run":
        try:
            ensemble_start(project, task, user=request.user, background=True)
        except RunRefused as refused:
            messages.error(request, str(refused))
        else:
            messages.success(request, f"Ensemble filter of {task.name} started.")
        return redirect("ensemble", slug=project.slug)
    form = EnsembleForm(request.POST, prefix=task.slug)
    if form.is_valid():
        try:
            ensemble_set(task, form.cleaned_data["judges"], form.cleaned_data["threshold"])
        except RunRefused as refused:
            messages.error(request, str(refused))
        else:
            messages.success(request, f"Ensemble of {task.name} saved.")
    else:
        messages.error(request, f"Ensemble of {task.name} not saved: {form.errors.as_text()}")
    return redirect("ensemble", slug=project.slug)
