"""The lead's judging pages: judges, runs with live progress, the ensemble filter."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from core.htmx import render_fragment_or_page
from core.page_errors import errors_on_form, refusal_as_message
from judging.forms import EnsembleForm, JudgeForm, RunStartForm, SamplingForm, TemplateForm
from judging.models import API_BACKENDS, Judge, JudgeRun
from judging.parsing import INVALID
from judging.prompts import template_save
from judging.selectors import (
    callable_judges,
    judges_of_project,
    run_batches,
    run_concurrency_chart,
    run_progress,
    runs_with_tallies,
    template_versions,
    templates_of_project,
)
from judging.services.call_check import SAMPLE_RIGHT, judge_call_check
from judging.services.ensemble import (
    ensemble_gold_set,
    ensemble_of,
    ensemble_set,
    ensemble_start,
    ensemble_summary,
    last_filtered_pairs,
)
from judging.services.judges import judge_delete, judge_save
from judging.services.runs import judge_run_cancel, judge_run_resume, judge_run_start
from judging.services.sampling import sample_start, sample_stop
from projects.access import project_for_lead
from projects.models import Project, Task


@login_required
def judge_list(request, slug: str):
    """The project's judges (editable) and the operator's (run-only)."""
    project = project_for_lead(request.user, slug)
    judges = judges_of_project(project).order_by("project_id", "name")
    return render(request, "judging/judges.html", {"project": project, "judges": judges})


@login_required
@require_http_methods(["GET", "POST"])
def judge_edit(request, slug: str, judge_id: int | None = None):
    """Create or edit one of the project's judges (the operator's: 404, like any other)."""
    project = project_for_lead(request.user, slug)
    judge = get_object_or_404(Judge, pk=judge_id, project=project) if judge_id else None
    form = JudgeForm(project, request.POST or None, judge=judge)
    if request.method == "POST" and form.is_valid():
        name = judge.name if judge else form.cleaned_data["name"]
        with errors_on_form(form):
            saved, _created = judge_save(name, project=project, check_ready=True, **form.changes())
            messages.success(request, _("Judge %(name)s saved.") % {"name": saved.name})
            return redirect("judge-list", slug=project.slug)
    status = 400 if request.method == "POST" else 200
    context = {
        "project": project,
        "form": form,
        "judge": judge,
        "templates": templates_of_project(project),
        "kinds": sorted(set(project.tasks.values_list("kind", flat=True))),
        "api_backends": API_BACKENDS,
    }
    return render(request, "judging/judge_form.html", context, status=status)


@login_required
@require_POST
def judge_test_call(request, slug: str, judge_id: int):
    """One call of the project's judge on a tiny built-in pair; the answer (or the error's
    status) is shown on the judge's page."""
    project = project_for_lead(request.user, slug)
    judge = get_object_or_404(
        Judge.objects.select_related("connection"), pk=judge_id, project=project
    )
    with refusal_as_message(request):
        check = judge_call_check(judge=judge, project=project)
        if check.error:
            messages.error(request, _("Test call failed: %(error)s") % {"error": check.error})
        elif check.answer == INVALID:
            messages.error(request, _test_call_invalid(check))
        else:
            messages.success(request, _test_call_answered(check))
    return redirect("judge-edit", slug=project.slug, judge_id=judge.pk)


def _test_call_invalid(check) -> str:
    values = {"template": check.template}
    if check.scale:
        return (
            _(
                "Test call: the reply holds no score on its scale with template %(template)s "
                "(invalid); check the model and the template's answer format."
            )
            % values
        )
    return (
        _(
            "Test call: the reply names no side with template %(template)s (invalid); "
            "check the model and the template's answer format."
        )
        % values
    )


def _test_call_answered(check) -> str:
    """What the judge answered, in one sentence per case (each whole, for translation)."""
    values = {
        "template": check.template,
        "seconds": f"{check.seconds:.1f}",
        "answer": check.answer,
        "right": SAMPLE_RIGHT,
    }
    if check.scale:
        low, high = check.scale
        values.update(score=f"{check.score:g}", low=low, high=high)
        answered = _("Test call scored the right answer %(score)s on %(low)s-%(high)s") % values
    elif check.right:
        answered = _("Test call answered %(answer)s (right)") % values
    else:
        answered = _("Test call answered %(answer)s (the right answer is %(right)s)") % values
    values["answered"] = answered
    if check.input_tokens is None:
        return _("%(answered)s in %(seconds)s s with template %(template)s.") % values
    values.update(tokens_in=check.input_tokens, tokens_out=check.output_tokens)
    return (
        _(
            "%(answered)s in %(seconds)s s with template %(template)s, "
            "%(tokens_in)s tokens in, %(tokens_out)s out."
        )
        % values
    )


@login_required
@require_POST
def judge_remove(request, slug: str, judge_id: int):
    project = project_for_lead(request.user, slug)
    judge = get_object_or_404(Judge, pk=judge_id, project=project)
    with refusal_as_message(request):
        judge_delete(judge)
        messages.success(request, _("Judge %(name)s deleted.") % {"name": judge.name})
    return redirect("judge-list", slug=project.slug)


@login_required
def template_list(request, slug: str):
    project = project_for_lead(request.user, slug)
    context = {"project": project, "templates": templates_of_project(project)}
    return render(request, "judging/templates.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def template_edit(request, slug: str, name: str | None = None):
    """A template's versions and a form for the next one. Editing a built-in saves a copy
    in the project (the built-in itself never changes); another project's: 404."""
    project = project_for_lead(request.user, slug)
    versions, built_in = template_versions(project, name) if name else ([], None)
    if name and not versions and built_in is None:
        raise Http404("no such template")
    latest = versions[0] if versions else built_in
    initial = (
        {"name": name, "answer_format": latest.answer_format, "body": latest.body} if latest else {}
    )
    form = TemplateForm(request.POST or None, initial=initial)
    if name:
        form.fields["name"].disabled = True
    if request.method == "POST" and form.is_valid():
        with errors_on_form(form):
            saved = template_save(
                name or form.cleaned_data["name"],
                form.cleaned_data["body"],
                form.cleaned_data["answer_format"],
                project,
            )
            messages.success(
                request,
                _("Template %(name)s v%(version)s saved.")
                % {"name": saved.name, "version": saved.version},
            )
            return redirect("template-edit", slug=project.slug, name=saved.name)
    status = 400 if request.method == "POST" else 200
    context = {
        "project": project,
        "form": form,
        "name": name,
        "versions": versions,
        "built_in": built_in,
    }
    return render(request, "judging/template_form.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def run_list(request, slug: str):
    project = project_for_lead(request.user, slug)
    form = RunStartForm(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        with errors_on_form(form):  # a run that cannot start: why, above the form
            run = judge_run_start(
                form.cleaned_data["judge"],
                project,
                task=form.cleaned_data["task"],
                samples=form.cleaned_data["samples"],
                user=request.user,
                background=True,
                mode=form.cleaned_data["mode"],
            )
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
    context = {
        "project": run.project,
        "progress": run_progress(run),
        "concurrency": run_concurrency_chart(run),
        "batches": run_batches(run),
        "poll_seconds": settings.ARBITER_BATCH_POLL_SECONDS,
    }
    return render_fragment_or_page(request, "judging/_progress.html", "judging/run.html", context)


@login_required
@require_POST
def run_control(request, slug: str, run_id: int, action: str):
    run = _run_of(request, slug, run_id)
    with refusal_as_message(request):
        if action == "cancel":
            judge_run_cancel(run)
        else:
            judge_run_resume(run, background=True)
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
                "form": EnsembleForm(project, initial=initial, prefix=task.slug),
                "summary": ensemble_summary(task, pairs) if pairs else None,
                "candidates": task.pairs.filter(status="candidate").count(),
                "easy": task.pairs.filter(status="easy").count(),
            }
        )
    judges = callable_judges(project)
    return render(
        request, "judging/ensemble.html", {"project": project, "rows": rows, "judges": judges}
    )


def _ensemble_post(request, project, task):
    if request.POST.get("action") == "gold":
        with refusal_as_message(request, _("No gold checks set: ")):
            made = ensemble_gold_set(task, by=request.user)
            messages.success(
                request,
                _(
                    "%(count)s easy pairs of %(task)s are gold checks now, with the side the "
                    "ensemble named unanimously."
                )
                % {"count": made, "task": task.name},
            )
        return redirect("ensemble", slug=project.slug)
    if request.POST.get("action") == "run":
        with refusal_as_message(request):
            ensemble_start(project, task, user=request.user, background=True)
            messages.success(
                request, _("Ensemble filter of %(task)s started.") % {"task": task.name}
            )
        return redirect("ensemble", slug=project.slug)
    form = EnsembleForm(project, request.POST, prefix=task.slug)
    if form.is_valid():
        with refusal_as_message(request):
            ensemble_set(task, form.cleaned_data["judges"], form.cleaned_data["threshold"])
            messages.success(request, _("Ensemble of %(task)s saved.") % {"task": task.name})
    else:
        messages.error(
            request,
            _("Ensemble of %(task)s not saved: %(errors)s")
            % {"task": task.name, "errors": form.errors.as_text()},
        )
    return redirect("ensemble", slug=project.slug)


@login_required
@require_POST
def sampling(request, slug: str):
    """Switch the project between rating every pair and rating a sample (the form is on the
    project's settings page)."""
    project = project_for_lead(request.user, slug)
    form = SamplingForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose every pair or a sample, and a budget of 1 or more."))
    elif form.cleaned_data["mode"] == Project.RatingMode.SAMPLE:
        weighed = sample_start(project, budget=form.cleaned_data["budget"])
        budget = form.cleaned_data["budget"]
        limit = (
            _("at most %(budget)s pairs per task") % {"budget": budget} if budget else _("no limit")
        )
        weights = (
            _("%(count)s pairs were weighed by the judges' uncertainty") % {"count": weighed}
            if weighed
            else _("the weights frozen when the sample started stay")
        )
        messages.success(
            request,
            _("The experts now rate a sample chosen for information (%(limit)s); %(weights)s.")
            % {"limit": limit, "weights": weights},
        )
    else:
        sample_stop(project)
        messages.success(request, _("The experts now rate every pair."))
    return redirect("project-settings", slug=slug)
