"""Imported ratings and adjudications: the last writes of `pairs_import`, inside its
transaction, after the pairs exist.

Imported ratings belong to inactive placeholder accounts `imported-<project slug>-<X>`: X is
the rating's annotator id when the row names one (an Arbiter export, which writes such an
account back as X, so ids survive export → import → export), else the position in the
row's score list (1, 2, ...), so that position i of every row is one rater. An imported
adjudication is recorded under the placeholder lead `imported-lead-<project slug>`.
"""

from django.contrib.auth import get_user_model

from annotation.importing.formats import PairRecord
from annotation.importing.native import RatingRecord
from annotation.models import Adjudication, AspectScore, Assignment, Pair, Project, Rating

_BATCH = 500


def placeholder_users(names: list[str]) -> dict:
    """Username → inactive account without a usable password, created when missing."""
    user_model = get_user_model()
    wanted = sorted(set(names))
    existing = {}
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        existing.update((u.username, u) for u in user_model.objects.filter(username__in=batch))
    missing = [name for name in wanted if name not in existing]
    if missing:
        fresh = []
        for name in missing:
            user = user_model(username=name, is_active=False)
            user.set_unusable_password()
            fresh.append(user)
        # ignore_conflicts: a concurrent import may create the same placeholder meanwhile.
        user_model.objects.bulk_create(fresh, batch_size=_BATCH, ignore_conflicts=True)
        for start in range(0, len(missing), _BATCH):
            batch = missing[start : start + _BATCH]
            existing.update((u.username, u) for u in user_model.objects.filter(username__in=batch))
    return existing


def _rater_name(project: Project, annotator: str) -> str:
    return f"imported-{project.slug}-{annotator}"


def _ratings_of(record: PairRecord) -> list[RatingRecord]:
    if record.ratings is not None:
        return record.ratings
    return [
        RatingRecord(
            annotator=str(position + 1),
            overall=score,
            aspects={},
            active_seconds=0.0,
            rationale="",
        )
        for position, score in enumerate(record.scores)
    ]


def imported_ratings_write(project: Project, rows: list[tuple[PairRecord, Pair]]) -> int:
    """Write the ratings (with aspect scores) of the freshly created pairs; returns how many."""
    by_pair = [(pair, _ratings_of(record)) for record, pair in rows]
    names = [_rater_name(project, r.annotator) for _, ratings in by_pair for r in ratings]
    if not names:
        return 0
    raters = placeholder_users(names)
    assignments, ratings, aspects = [], [], []
    for pair, records in by_pair:
        for item in records:
            rater = raters[_rater_name(project, item.annotator)]
            assignment = Assignment(pair=pair, annotator=rater, status=Assignment.Status.SUBMITTED)
            assignments.append(assignment)
            rating = Rating(
                assignment=assignment,
                pair=pair,
                annotator=rater,
                scale=project.scale_points,
                overall=item.overall,
                rationale=item.rationale,
                active_seconds=item.active_seconds,
                imported=True,
            )
            ratings.append(rating)
            aspects.extend(
                AspectScore(rating=rating, aspect=key, scale=project.scale_points, score=score)
                for key, score in item.aspects.items()
            )
    Assignment.objects.bulk_create(assignments, batch_size=_BATCH)
    for rating in ratings:
        rating.assignment_id = rating.assignment.id
    Rating.objects.bulk_create(ratings, batch_size=_BATCH)
    for aspect in aspects:
        aspect.rating_id = aspect.rating.id
    AspectScore.objects.bulk_create(aspects, batch_size=_BATCH)
    return len(ratings)


def imported_adjudication(record: PairRecord) -> Adjudication | None:
    """The record's adjudication, unsaved (decision_set reads its decision before the pair
    exists); `imported_adjudications_write` saves it."""
    if record.adjudication is None:
        return None
    decision, note = record.adjudication
    return Adjudication(decision=decision, note=note)


def imported_adjudications_write(project: Project, decided: list[tuple[Adjudication, Pair]]):
    """Save the adjudications of the freshly created pairs under the placeholder lead."""
    if not decided:
        return 0
    name = f"imported-lead-{project.slug}"
    lead = placeholder_users([name])[name]
    for adjudication, pair in decided:
        adjudication.pair = pair
        adjudication.lead = lead
    Adjudication.objects.bulk_create([a for a, _ in decided], batch_size=_BATCH)
    return len(decided)
