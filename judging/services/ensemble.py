"""Ensemble filtering (docs/architecture.md §5.3): the task's ensemble judges look at its
candidate pairs in both orders; a pair is `easy` when the share of their verdicts that agree
with the majority side is at or above the threshold, else `queued` for the annotators.

Failed calls are left out of the share; tie and invalid answers count against agreement. A
candidate with no answer at all goes to the annotators (nothing says it is easy).
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db import transaction
from django.utils.translation import gettext

from annotation.gold.services import GoldEntry, gold_set
from content.models import Pair
from judging.models import JudgeRun, TaskEnsemble, Verdict
from judging.selectors import run_pair_ids
from judging.services.runs import RunRefused, judge_run_start
from projects.models import Project, Task


@dataclass
class EnsembleSummary:
    task: str
    candidates: int = 0
    easy: int = 0
    queued: int = 0
    gold: int = 0  # easy pairs a lead made gold checks since
    threshold: float = 0.9
    # Pairs each judge alone would have removed (its own verdicts agreeing at the threshold).
    by_judge: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def ensemble_of(task: Task) -> TaskEnsemble | None:
    return TaskEnsemble.objects.filter(task=task).prefetch_related("judges").first()


def ensemble_set(task: Task, judges, threshold: float | None = None) -> TaskEnsemble:
    if threshold is not None and not 0.5 < threshold <= 1:
        raise RunRefused(gettext("the agreement threshold must be above 0.5 and at most 1"))
    judges = list(judges)
    if any(judge.project_id not in (None, task.project_id) for judge in judges):
        raise RunRefused(
            gettext("an ensemble takes the project's own judges and the operator's only")
        )
    ensemble, _ = TaskEnsemble.objects.update_or_create(
        task=task, defaults={"threshold": threshold}
    )
    ensemble.judges.set(judges)
    return ensemble


def ensemble_start(project: Project, task: Task, *, user=None, background=False) -> list[JudgeRun]:
    """Start one run per ensemble judge over the task's candidate pairs. The runs are created
    together so that the pairs are decided only when the last one finishes."""
    ensemble = ensemble_of(task)
    if ensemble is None or not ensemble.judges.exists():
        raise RunRefused(
            gettext("task %(task)s names no ensemble judges") % {"task": repr(task.slug)}
        )
    candidates = list(
        Pair.objects.filter(task=task, status=Pair.Status.CANDIDATE).values_list("id", flat=True)
    )
    if not candidates:
        raise RunRefused(
            gettext("task %(task)s has no candidate pairs") % {"task": repr(task.slug)}
        )
    with transaction.atomic():  # the chunks are enqueued when this commits
        return [
            judge_run_start(
                judge,
                project,
                task=task,
                pair_ids=candidates,
                purpose=JudgeRun.Purpose.ENSEMBLE,
                user=user,
                background=background,
            )
            for judge in ensemble.judges.all()
        ]


def _threshold(task: Task, ensemble: TaskEnsemble | None) -> float:
    if ensemble is not None and ensemble.threshold is not None:
        return ensemble.threshold
    return task.project.ensemble_threshold


def _agreement(choices: list[str]) -> float:
    """Share of the answers that side with the majority side (A or B)."""
    if not choices:
        return 0.0
    sides = Counter(choice for choice in choices if choice in ("A", "B"))
    return max(sides.values(), default=0) / len(choices)


def _choices(judges, pair_ids) -> tuple[dict, dict]:
    """Answers per pair (all judges) and per (judge name, pair); failed calls left out."""
    names = {judge.pk: judge.name for judge in judges}
    per_pair: dict[int, list[str]] = defaultdict(list)
    per_judge: dict[tuple[str, int], list[str]] = defaultdict(list)
    rows = Verdict.objects.filter(
        judge__in=judges, pair_id__in=pair_ids, choice__isnull=False
    ).values_list("judge_id", "pair_id", "choice")
    for judge_id, pair_id, choice in rows:
        if choice is None:  # excluded by the query already
            continue
        per_pair[pair_id].append(choice)
        per_judge[(names[judge_id], pair_id)].append(choice)
    return per_pair, per_judge


def ensemble_apply(task: Task) -> int:
    """Mark the task's candidates easy or queued from the ensemble judges' verdicts;
    returns how many were decided."""
    ensemble = ensemble_of(task)
    judges = list(ensemble.judges.all()) if ensemble else []
    threshold = _threshold(task, ensemble)
    with transaction.atomic():
        candidates = list(
            Pair.objects.select_for_update()
            .filter(task=task, status=Pair.Status.CANDIDATE)
            .values_list("id", flat=True)
        )
        per_pair, _ = _choices(judges, candidates)
        easy = [
            pid for pid in candidates if per_pair[pid] and _agreement(per_pair[pid]) >= threshold
        ]
        Pair.objects.filter(pk__in=easy).update(status=Pair.Status.EASY)
        Pair.objects.filter(pk__in=set(candidates) - set(easy)).update(status=Pair.Status.QUEUED)
    return len(candidates)


def ensemble_summary(task: Task, pair_ids: list[int]) -> EnsembleSummary:
    """What the filter did to these pairs: how many it removed, overall and per judge."""
    ensemble = ensemble_of(task)
    judges = list(ensemble.judges.all()) if ensemble else []
    threshold = _threshold(task, ensemble)
    statuses = Counter(Pair.objects.filter(pk__in=pair_ids).values_list("status", flat=True))
    summary = EnsembleSummary(
        task=task.slug,
        candidates=len(pair_ids),
        easy=statuses[Pair.Status.EASY] + statuses[Pair.Status.GOLD],
        queued=len(pair_ids) - statuses[Pair.Status.EASY] - statuses[Pair.Status.GOLD],
        gold=statuses[Pair.Status.GOLD],
        threshold=threshold,
    )
    _, per_judge = _choices(judges, pair_ids)
    summary.by_judge = {judge.name: 0 for judge in judges}
    for (name, _pair_id), choices in per_judge.items():
        summary.by_judge[name] += _agreement(choices) >= threshold
    return summary


def last_filtered_pairs(task: Task) -> list[int]:
    """The pairs of the task's latest ensemble filter (its runs share one selection)."""
    run = (
        JudgeRun.objects.filter(task=task, purpose=JudgeRun.Purpose.ENSEMBLE)
        .order_by("-created_at", "-id")
        .first()
    )
    if run is None:
        return []
    return run_pair_ids(run)


def ensemble_run_finished(run: JudgeRun | None) -> None:
    """What a run's end means for its task's ensemble, for the one caller that finished it
    (`run`; None when this call finished no run): a run of the ensemble decides the task's
    candidates once no other run of it is open; any other run changes nothing. Here rather
    than in the run service, which knows nothing of ensembles."""
    if run is None or run.purpose != JudgeRun.Purpose.ENSEMBLE or run.task is None:
        return
    still_running = JudgeRun.objects.filter(
        project=run.project,
        task=run.task,
        purpose=JudgeRun.Purpose.ENSEMBLE,
        status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING],
    ).exists()
    if not still_running:
        ensemble_apply(run.task)


def ensemble_unanimous_easy(task: Task) -> list[GoldEntry]:
    """The task's easy pairs on which every answer of its ensemble judges named the same side:
    candidates for gold checks (a lead confirms them in bulk)."""
    ensemble = ensemble_of(task)
    judges = list(ensemble.judges.all()) if ensemble else []
    easy = dict(
        Pair.objects.filter(task=task, status=Pair.Status.EASY).values_list("id", "external_id")
    )
    per_pair, _ = _choices(judges, list(easy))
    return [
        GoldEntry(easy[pair_id], choices[0])
        for pair_id, choices in sorted(per_pair.items())
        if choices and choices[0] in ("A", "B") and all(c == choices[0] for c in choices)
    ]


def ensemble_gold_set(task: Task, *, by=None) -> int:
    """Make the ensemble's unanimous easy pairs gold checks with the side it named; how many
    became gold."""
    entries = ensemble_unanimous_easy(task)
    if not entries:
        raise RunRefused(
            gettext("task %(task)s has no easy pair its ensemble judged unanimously")
            % {"task": repr(task.slug)}
        )
    return gold_set(task, entries, by=by)
