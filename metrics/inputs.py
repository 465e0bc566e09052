"""What every figure is computed from, read in one place: `report --json`, the export's
manifest and the dashboards all take their inputs here, so they cannot drift apart.

Each reader is one query whatever the size of the project, and returns plain dicts keyed by
task id (then pair id) that the pure functions of `metrics` take as they are.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Max, Q, QuerySet

from annotation.models import AspectScore, Rating
from content.lifecycle import DECIDED_STATUSES, IN_THE_QUEUE, POOL_STATUSES
from content.models import Pair
from judging.models import JudgeRun, Verdict
from metrics.judge_accuracy import VerdictRow
from metrics.judge_bias import PairTraits
from projects.models import Project
from projects.scale import answers_expected_side

# The pairs humans and judges are scored against: kept, with a side label.
EVALUATED: dict[str, Any] = {"status": Pair.Status.KEPT, "label__in": ["A", "B"]}

Labels = dict[int, dict[int, str]]  # task -> pair -> "A" | "B"
Scores = dict[int, dict[int, list[int]]]  # task -> pair -> canonical scores
# pair, canonical overall, scale, swapped, active seconds
AnnotatorRating = tuple[int, int, int, bool, float]
AnnotatorRatings = dict[int, dict[int, list[AnnotatorRating]]]  # task -> annotator -> ratings
GroupScore = tuple[int, str, float]  # prompt id, groups, mean score


def evaluated_pairs(project: Project) -> QuerySet[Pair]:
    return Pair.objects.filter(project=project, **EVALUATED)


def kept_labels(project: Project) -> Labels:
    """{task: {pair: "A" | "B"}} of the evaluated pairs."""
    labels: Labels = defaultdict(dict)
    for pair_id, task_id, label in evaluated_pairs(project).values_list("id", "task_id", "label"):
        labels[task_id][pair_id] = label
    return labels


def decided_pairs(project: Project) -> dict[int, dict[int, tuple[str, str]]]:
    """{task: {pair: (external id, "kept" | "dropped")}} of the rated pairs decided so far."""
    decided: dict[int, dict[int, tuple[str, str]]] = defaultdict(dict)
    rows = Pair.objects.filter(
        project=project, status__in=DECIDED_STATUSES, rating_count__gt=0
    ).values_list("task_id", "id", "external_id", "status")
    for task_id, pair_id, external_id, status in rows:
        decided[task_id][pair_id] = (external_id, status)
    return decided


def expert_ratings_queryset(project: Project) -> QuerySet[Rating]:
    """The ratings the experts' agreement is measured on: every rating of the project, the
    imported ones too (an imported file's raters are experts whose accounts are placeholders),
    gold checks left out (they test an annotator, not the pair). The agreement figures and the
    human ceiling both read this, so they count the same ratings."""
    return Rating.objects.filter(pair__project=project).exclude(pair__status=Pair.Status.GOLD)


def overall_scores(project: Project) -> Scores:
    """{task: {pair: [canonical overall scores]}} of every rated pair."""
    scores: Scores = defaultdict(lambda: defaultdict(list))
    rows = expert_ratings_queryset(project).values_list("pair__task_id", "pair_id", "overall")
    for task_id, pair_id, overall in rows:
        scores[task_id][pair_id].append(overall)
    return scores


def expert_ratings(project: Project) -> dict[int, list[tuple[int, int, int]]]:
    """{task: [(rater, pair, canonical overall)]} of `expert_ratings_queryset`: the human
    ceiling's input, each rating with who made it (leave-one-out needs the rater)."""
    by_task: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    rows = expert_ratings_queryset(project).values_list(
        "pair__task_id", "annotator_id", "pair_id", "overall"
    )
    for task_id, annotator_id, pair_id, overall in rows.order_by("id"):
        by_task[task_id].append((annotator_id, pair_id, overall))
    return by_task


def aspect_scores(project: Project) -> dict[int, dict[str, dict[int, list[int]]]]:
    """{task: {aspect key: {pair: [canonical scores]}}}."""
    scores: dict[int, dict[str, dict[int, list[int]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    rows = (
        AspectScore.objects.filter(rating__pair__project=project)
        .exclude(rating__pair__status=Pair.Status.GOLD)
        .values_list("rating__pair__task_id", "aspect", "rating__pair_id", "score")
    )
    for task_id, aspect, pair_id, score in rows:
        scores[task_id][aspect][pair_id].append(score)
    return scores


def annotator_ratings(project: Project) -> AnnotatorRatings:
    """{task: {annotator: [(pair, canonical overall, scale, swapped, active seconds)]}} in
    the order each annotator submitted, people only (no imported placeholder raters), gold
    checks left out."""
    rows = (
        Rating.objects.filter(pair__project=project, imported=False)
        .exclude(pair__status=Pair.Status.GOLD)
        .order_by("created_at", "id")
        .values_list(
            "pair__task_id",
            "annotator_id",
            "pair_id",
            "overall",
            "scale",
            "assignment__swapped",
            "active_seconds",
        )
    )
    by_task: AnnotatorRatings = defaultdict(lambda: defaultdict(list))
    for task_id, annotator_id, pair_id, overall, scale, swapped, seconds in rows:
        by_task[task_id][annotator_id].append((pair_id, overall, scale, swapped, seconds))
    return by_task


def gold_answers(project: Project) -> dict[int, dict[int, list[bool]]]:
    """{task: {annotator: [answer right?]}} of the gold checks mixed into the queues (a tie
    is wrong; the qualification set is reported apart)."""
    rows = Rating.objects.filter(
        pair__project=project, pair__status=Pair.Status.GOLD, pair__gold__qualification=False
    ).values_list("pair__task_id", "annotator_id", "overall", "scale", "pair__gold__side")
    by_task: dict[int, dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for task_id, annotator_id, overall, scale, side in rows:
        by_task[task_id][annotator_id].append(answers_expected_side(overall, scale, side))
    return by_task


def group_scores(project: Project, judged: "JudgeInputs") -> dict[int, dict[int, list[GroupScore]]]:
    """{task: {judge: [(prompt id, groups, score)]}}: the mean pointwise score each judge gave
    each group of each prompt (over samples, and over the pairs showing it: an image paired
    twice, as an odd one out is, counts once), the input of MJ-Bench's bias figures
    (metrics/group_bias.py). An image is known by its prompt and its groups, as MJ-Bench's
    (occupation, demographic). Responses without groups or without a score are left out."""
    by_task: dict[int, dict[int, list[GroupScore]]] = defaultdict(lambda: defaultdict(list))
    if not judged.pointwise:
        return by_task
    rows = Verdict.objects.filter(
        pair__project=project, order=Verdict.Order.POINTWISE, choice__isnull=False
    ).values_list(
        "judge_id",
        "pair__task_id",
        "pair__prompt_id",
        "pair__response_a__groups",
        "score_a",
        "pair__response_b__groups",
        "score_b",
    )
    # (task, judge, prompt, groups) -> scores
    scores: dict[tuple[int, int, int, str], list[float]] = defaultdict(list)
    for judge_id, task_id, prompt_id, *sides in rows:
        for groups, score in (sides[:2], sides[2:]):
            if groups and isinstance(groups, dict) and score is not None:
                scores[(task_id, judge_id, prompt_id, _group_key(groups))].append(score)
    for (task_id, judge_id, prompt_id, group), values in scores.items():
        by_task[task_id][judge_id].append((prompt_id, group, sum(values) / len(values)))
    return by_task


def _group_key(groups: dict[str, object]) -> str:
    return ", ".join(f"{key}={value}" for key, value in sorted(groups.items()))


def _text_and_images(content: object) -> tuple[int, int]:
    parts = content if isinstance(content, list) else []
    text = sum(len(p[1]) for p in parts if len(p) == 2 and p[0] == "text" and isinstance(p[1], str))
    images = sum(1 for p in parts if len(p) == 2 and p[0] == "image")
    return text, images


def pair_traits(project: Project) -> dict[int, PairTraits]:
    """{pair: its responses' text length, image count and generator} of the evaluated pairs
    (the bias cards' inputs)."""
    rows = evaluated_pairs(project).values_list(
        "id",
        "response_a__content",
        "response_b__content",
        "response_a__generator__name",
        "response_b__generator__name",
    )
    traits = {}
    for pair_id, content_a, content_b, model_a, model_b in rows:
        (text_a, images_a), (text_b, images_b) = (
            _text_and_images(content_a),
            _text_and_images(content_b),
        )
        traits[pair_id] = PairTraits(
            text_a, text_b, images_a, images_b, model_a or "", model_b or ""
        )
    return traits


@dataclass
class JudgeInputs:
    """The judges with verdicts in a project. `rows` holds only verdicts on evaluated pairs
    (the others never enter a figure) as metrics.judge_accuracy.VerdictRow tuples; `samples` is how
    many samples per order each judge was asked for, `orders` in how many orders (2, or 1 for
    a pointwise judge) and `tasks` where it gave any verdict, all read over all its verdicts in
    the project. `scales` names a pointwise judge's scale (its runs' templates, or imported).
    Projects without pointwise judges pay no query for them."""

    names: dict[int, str] = field(default_factory=dict)
    samples: dict[int, int] = field(default_factory=dict)
    orders: dict[int, int] = field(default_factory=dict)
    pointwise: set[int] = field(default_factory=set)  # judges with pointwise verdicts
    scales: dict[int, str] = field(default_factory=dict)
    tasks: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    rows: dict[int, dict[int, list[VerdictRow]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def by_name(self) -> list[int]:
        return sorted(self.names, key=lambda judge_id: self.names[judge_id])

    def scale(self, judge_id: int) -> str:
        return self.scales.get(judge_id, PAIRWISE)


PAIRWISE = "pairwise"


def judge_inputs(project: Project) -> JudgeInputs:
    inputs = JudgeInputs()
    coverage = (
        Verdict.objects.filter(pair__project=project)
        .values("judge_id", "judge__name", "pair__task_id", "order")
        .annotate(samples=Max("sample") + 1)
        .values_list("judge_id", "judge__name", "pair__task_id", "order", "samples")
        .order_by()
    )
    orders: dict[int, set[str]] = defaultdict(set)
    for judge_id, name, task_id, order, samples in coverage:
        inputs.names[judge_id] = name
        inputs.samples[judge_id] = max(inputs.samples.get(judge_id, 0), samples)
        inputs.tasks[judge_id].add(task_id)
        orders[judge_id].add(order)
    # A pointwise verdict is one trial per sample; a judge with both kinds counts as pairwise.
    inputs.orders = {j: 1 if o == {Verdict.Order.POINTWISE} else 2 for j, o in orders.items()}
    inputs.pointwise = {j for j, o in orders.items() if Verdict.Order.POINTWISE in o}
    scales: dict[int, set[str]] = defaultdict(set)
    runs = JudgeRun.objects.filter(project=project, judge_id__in=inputs.pointwise)
    for judge_id, scale in runs.exclude(pointwise_scale="").values_list(
        "judge_id", "pointwise_scale"
    ):
        scales[judge_id].update(scale.split(","))
    inputs.scales = {judge_id: ",".join(sorted(s)) for judge_id, s in scales.items()}
    verdicts = Verdict.objects.filter(
        pair__project=project, **{f"pair__{key}": value for key, value in EVALUATED.items()}
    ).values_list("judge_id", "pair__task_id", "pair_id", "order", "sample", "choice")
    for judge_id, task_id, pair_id, order, sample, choice in verdicts:
        inputs.rows[judge_id][task_id].append((pair_id, order, sample, choice))
    return inputs


# The pool a prediction-powered figure speaks for: the pairs in the experts' queue, rated or not,
# and those they dropped once rated (docs/architecture.md §6.6). Easy pairs (removed by the
# ensemble), candidates and gold checks are other populations.
PoolVotes = dict[int, dict[int, dict[int, tuple[int, int, int]]]]  # task -> judge -> pair -> votes


def pool_votes(project: Project) -> PoolVotes:
    """Every judge's trials on every pool pair, by task: (naming A, naming B, answered),
    counted by the database (one query; failed calls, choice None, are not answered)."""
    votes: PoolVotes = defaultdict(lambda: defaultdict(dict))
    rows = (
        Verdict.objects.filter(pair__project=project, pair__status__in=POOL_STATUSES)
        .values("pair__task_id", "judge_id", "pair_id")
        .annotate(
            a=Count("id", filter=Q(choice="A")),
            b=Count("id", filter=Q(choice="B")),
            answered=Count("choice"),
        )
        .values_list("pair__task_id", "judge_id", "pair_id", "a", "b", "answered")
        .order_by()
    )
    for task_id, judge_id, pair_id, a, b, answered in rows.iterator(chunk_size=20_000):
        votes[task_id][judge_id][pair_id] = (a, b, answered)
    return votes


PoolDesign = dict[int, dict[int, tuple[float, float, bool]]]  # task -> pair -> design
PoolOutcomes = dict[int, dict[int, str | None]]  # task -> decided pair -> side (None: dropped)


def pool_design(project: Project) -> tuple[PoolDesign, PoolOutcomes]:
    """Each pool pair's draw, sampling weight (1 when none) and whether it is still undecided,
    by task; and each decided pair's outcome: the experts' side when they kept it with one,
    None when they dropped it (one query)."""
    design: PoolDesign = defaultdict(dict)
    outcomes: PoolOutcomes = defaultdict(dict)
    rows = Pair.objects.filter(project=project, status__in=POOL_STATUSES).values_list(
        "task_id", "pk", "draw", "weight", "status", "label"
    )
    for task_id, pair_id, draw, weight, status, label in rows.order_by().iterator(
        chunk_size=20_000
    ):
        undecided = status in IN_THE_QUEUE
        design[task_id][pair_id] = (draw, weight or 1.0, undecided)
        if not undecided:
            kept = status == Pair.Status.KEPT and label in ("A", "B")
            outcomes[task_id][pair_id] = label if kept else None
    return design, outcomes
