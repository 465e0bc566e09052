"""The disagreement queue and the un-blinded pair page of the leads."""

from django.db.models import Exists, F, OuterRef, Q
from django.db.models.functions import Abs

from annotation.models import Adjudication, Flag, Rating
from annotation.models.gold import GOLD_FROM_STATUSES
from annotation.selectors import assets_by_sha
from content.models import Pair
from content.rendering import content_parts, image_shas
from judging.models import Verdict
from projects.models import Project
from projects.scale import scale_labels, side_of, to_form

NEAR = 0.5  # "next to the ambiguous band": this much beyond its edge
REASONS = {
    "span": "span at or above the limit",
    "ambiguous": "mean in or next to the ambiguous band",
    "flagged": "flagged by an annotator",
}
PAGE_SIZE = 50


def _queue(project: Project, task_slug: str = "", reason: str = ""):
    """Complete pairs the rules drop or nearly drop, and flagged pairs, most contested first
    (widest span, then mean closest to the centre)."""
    open_flags = Flag.objects.filter(pair=OuterRef("pk"), resolved_at__isnull=True)
    pairs = Pair.objects.filter(project=project).annotate(
        flagged=Exists(open_flags),
        distance=Abs(F("consensus_mean") - project.center),
    )
    # A gold check is never decided, so it is never a disagreement (flagged, it is listed).
    complete = Q(rating_count__gte=project.annotators_per_pair) & ~Q(status=Pair.Status.GOLD)
    by_span = complete & Q(consensus_span__gte=project.max_span)
    by_mean = complete & Q(distance__lte=project.ambiguous_half_width + NEAR)
    chosen = {"span": by_span, "ambiguous": by_mean, "flagged": Q(flagged=True)}
    condition = chosen.get(reason) or (by_span | by_mean | Q(flagged=True))
    pairs = pairs.filter(condition)
    if task_slug:
        pairs = pairs.filter(task__slug=task_slug)
    return pairs.order_by(
        F("consensus_span").desc(nulls_last=True), F("distance").asc(nulls_last=True), "id"
    )


def disagreements(project: Project, *, task_slug: str = "", reason: str = "", page: int = 1):
    """One page of the disagreement queue (_queue), each pair with its reasons."""
    pairs = _queue(project, task_slug, reason).select_related("task")
    total = pairs.count()
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(1, page), pages)  # past the last page: the last (no offset past the table)
    rows = list(pairs[(page - 1) * PAGE_SIZE : page * PAGE_SIZE])
    for pair in rows:
        pair.reasons = [
            text
            for key, text in REASONS.items()
            if (key == "flagged" and pair.flagged)
            or (
                key == "span"
                and pair.consensus_span is not None
                and pair.rating_count >= project.annotators_per_pair
                and pair.consensus_span >= project.max_span
            )
            or (
                key == "ambiguous"
                and pair.distance is not None
                and pair.rating_count >= project.annotators_per_pair
                and pair.distance <= project.ambiguous_half_width + NEAR
            )
        ]
    return {
        "pairs": rows,
        "total": total,
        "page": page,
        "pages": pages,
        "reasons": REASONS,
        "tasks": list(project.tasks.order_by("slug")),
        "task_slug": task_slug,
        "reason": reason,
    }


def queue_neighbours(project: Project, pair_id: int, task_slug="", reason="") -> dict:
    """The pairs before and after this one in the disagreement queue (same filters), and its
    place there (None when the pair is not in the queue)."""
    ids = list(_queue(project, task_slug, reason).values_list("id", flat=True))
    if pair_id not in ids:
        return {"previous": None, "next": ids[0] if ids else None, "position": None, "of": len(ids)}
    at = ids.index(pair_id)
    return {
        "previous": ids[at - 1] if at > 0 else None,
        "next": ids[at + 1] if at + 1 < len(ids) else None,
        "position": at + 1,
        "of": len(ids),
    }


def _as_seen(rating, labels: dict, aspect_labels: dict, center: float) -> None:
    """What the annotator pressed, on the form they saw (Left/Right), beside the canonical,
    and the side the rating prefers ("=" for none)."""
    side = side_of(rating.overall, center)
    rating.side = side if side in ("A", "B") else "="
    swapped = rating.assignment.swapped if rating.assignment_id else False
    pressed = to_form(rating.overall, rating.scale, swapped)
    rating.pressed = pressed
    rating.pressed_label = labels.get(pressed, "")
    rating.left, rating.right = ("B", "A") if swapped else ("A", "B")
    rating.aspects_seen = [
        {
            "label": aspect_labels.get(score.aspect, score.aspect),
            "canonical": score.score,
            "pressed": to_form(score.score, rating.scale, swapped),
        }
        for score in rating.aspect_scores.all()
    ]


def pair_review(project: Project, pair_id: int) -> dict | None:
    """Everything about one pair, un-blinded, for its leads."""
    pair = (
        Pair.objects.filter(project=project, pk=pair_id)
        .select_related("task", "prompt", "response_a__generator", "response_b__generator")
        .first()
    )
    if pair is None:
        return None
    shas = image_shas(pair.prompt.content, pair.response_a.content, pair.response_b.content)
    assets = assets_by_sha(shas)
    ratings = list(
        Rating.objects.filter(pair=pair)
        .select_related("annotator", "assignment")
        .prefetch_related("aspect_scores")
        .order_by("created_at", "id")
    )
    labels = dict(scale_labels(project.scale_points))
    aspect_labels = {a["key"]: a.get("label", a["key"]) for a in pair.task.aspects}
    for rating in ratings:
        _as_seen(rating, labels, aspect_labels, project.center)
    return {
        "pair": pair,
        "prompt_parts": content_parts(pair.prompt.content, assets),
        "a_parts": content_parts(pair.response_a.content, assets),
        "b_parts": content_parts(pair.response_b.content, assets),
        "ratings": ratings,
        "gold_possible": pair.status in GOLD_FROM_STATUSES and not ratings,
        "verdicts": list(
            Verdict.objects.filter(pair=pair)
            .select_related("judge")
            .order_by("judge__name", "order", "sample")
        ),
        "adjudications": list(Adjudication.objects.filter(pair=pair).select_related("lead")),
        "requests": list(pair.annotator_requests.select_related("lead")),
        "flags": list(Flag.objects.filter(pair=pair).select_related("reported_by")),
        "decisions": Adjudication.Decision.choices,
    }
