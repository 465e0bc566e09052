"""The demo's finished work, so that every lead page shows what it is for on a first visit:
per task, pairs already rated by three experts (most agreeing, one too far apart and one too
close to call: both dropped), the two offline judges' verdicts on them, a few candidates
left for the ensemble filter, and a finished dataset export.

The experts are other accounts than annotator1..3, whose queues stay full. They rate through
the same services as the pages, while their pairs are the only open ones of the task (the
first run); a rerun finds the work done and changes nothing."""

import random
from pathlib import Path

from django.contrib.auth import get_user_model

from annotation.gold.services import GoldEntry, gold_set
from annotation.models import Rating
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from demo.pairs import TASKS, build_pairs, import_missing
from exports.jobs import export_job_start
from exports.models import ExportJob
from judging.models import Judge, Verdict
from judging.services.ensemble import ensemble_set
from judging.services.runs import judge_run_start
from projects.models import Membership, Project
from projects.scale import to_form
from projects.services.members import membership_set

EXPERTS = ("expert1", "expert2", "expert3")


def OTHER_END(score: int, project: Project) -> int:
    """The same strength for the other side: the scale mirrored around its centre."""
    return project.scale_points + 1 - score


FINISHED = range(101, 107)  # pair numbers of the finished work, per task
CANDIDATES = range(201, 204)  # left for the ensemble filter
GOLD = range(301, 303)  # gold checks mixed into the live annotators' queues
# The experts' canonical scores when A is the better response (mirrored when B is). The
# third pair is too far apart (span 5 > 4) and the fifth too close to call: both dropped.
SCORES = [(7, 6, 6), (6, 6, 5), (7, 2, 6), (5, 6, 6), (4, 5, 3), (6, 7, 7)]


def finished_work(
    project: Project, folder: Path, password: str, judges: list[str], *, lead: str
) -> dict:
    """The finished work of every task; `lead` (a username) starts the export."""
    _experts(project, password)
    rated = candidates = 0
    finished_ids = []
    for slug in TASKS:
        pairs = build_pairs(slug, folder, FINISHED)
        made = import_missing(project, slug, folder, [r for r, _ in pairs], queue=True)
        finished_ids += [record["id"] for record, _ in pairs]
        if made:
            rated += _rate(project, slug, {record["id"]: good for record, good in pairs})
        records = [record for record, _ in build_pairs(slug, folder, CANDIDATES)]
        candidates += import_missing(project, slug, folder, records, queue=False)
        gold = build_pairs(slug, folder, GOLD)
        if import_missing(project, slug, folder, [record for record, _ in gold], queue=False):
            explanation = "The better response follows the prompt; the other does not."
            entries = [GoldEntry(record["id"], good, explanation) for record, good in gold]
            gold_set(project.tasks.get(slug=slug), entries)
    finished = Pair.objects.filter(project=project, external_id__in=finished_ids)
    verdicts = _judge(project, judges, list(finished.values_list("pk", flat=True)))
    pairwise = Judge.objects.filter(name__in=judges, project=None, templates={})
    for task in project.tasks.all():
        ensemble_set(task, pairwise)
    exported = _export(project, lead)
    return {"ratings": rated, "candidates": candidates, "verdicts": verdicts, "export": exported}


def _experts(project: Project, password: str) -> None:
    for username in EXPERTS:
        user, _ = get_user_model().objects.get_or_create(username=username)
        user.set_password(password)
        user.save()
        membership_set(user, project, Membership.Role.ANNOTATOR)


def _rate(project: Project, slug: str, good_side: dict[str, str]) -> int:
    """Each expert rates every open pair of the task, if those are only the finished ones."""
    task = project.tasks.get(slug=slug)
    open_ids = set(
        Pair.objects.filter(task=task, status__in=["queued", "in_progress"]).values_list(
            "external_id", flat=True
        )
    )
    if not open_ids or not open_ids <= set(good_side):
        return 0  # other pairs are open: a claim could take one of them
    order = sorted(good_side)
    rated = 0
    for index, username in enumerate(EXPERTS):
        expert = get_user_model().objects.get(username=username)
        rng = random.Random(f"demo-expert/{slug}/{username}")
        while (assignment := assignment_claim(expert, task)) is not None:
            pair = assignment.pair
            score = SCORES[order.index(pair.external_id) % len(SCORES)][index]
            canonical = score if good_side[pair.external_id] == "A" else OTHER_END(score, project)
            form = to_form(canonical, project.scale_points, assignment.swapped)
            aspects = _aspect_forms(form, task.aspects, project.scale_points, rng)
            seconds = rng.uniform(25, 140)
            rating_submit(
                assignment.pk,
                expert,
                RatingInput(overall=form, aspects=aspects, active_seconds=seconds),
            )
            rated += 1
    return rated


def _aspect_forms(
    form: int, aspects: list[dict], points: int, rng: random.Random
) -> dict[str, str | int | None]:
    """Each aspect near the overall score but not a copy of it: the first (faithfulness,
    say) follows it within a point, the others spread wider, so an expert who prefers one
    response overall now and then finds the other's image as good or better."""
    spreads = ((-1, 0, 0, 0, 1), (-2, -1, -1, 0, 0, 1, 1, 2))
    return {
        aspect["key"]: min(max(form + rng.choice(spreads[min(index, 1)]), 1), points)
        for index, aspect in enumerate(aspects)
    }


def _judge(project: Project, judges: list[str], pair_ids: list[int]) -> int:
    """The offline judges' verdicts on the finished pairs, once."""
    if Verdict.objects.filter(pair_id__in=pair_ids).exists():
        return 0
    for judge in Judge.objects.filter(name__in=judges, project=None).order_by("name"):
        judge_run_start(judge, project, pair_ids=pair_ids)
    return Verdict.objects.filter(pair_id__in=pair_ids).count()


def _export(project: Project, lead: str) -> bool:
    """One finished export of the kept pairs, once (in the embedded mode it is built now)."""
    if ExportJob.objects.filter(project=project).exists() or not Rating.objects.exists():
        return False
    user = get_user_model().objects.get(username=lead)
    export_job_start(project, user, file_format="jsonl")
    return True
