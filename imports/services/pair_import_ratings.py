"""Imported ratings and adjudications: the last writes of `pairs_import`, inside its
transaction, after the pairs exist.

Imported ratings belong to inactive placeholder accounts `imported-<project slug>-<X>`: X is
the rating's annotator id when the row names one (an Arbiter export, which writes such an
account back as X, so ids survive export → import → export), else the position in the
row's score list (1, 2, ...), so that position i of every row is one rater. An imported
adjudication is recorded under the placeholder lead `imported-lead-<project slug>`.

A placeholder is an account with a `PlaceholderAccount` row, made in the same transaction as
the account; the name only finds it. An account of that name without the row is a person's
(made before such names were refused, or by an operator in the admin): the import is refused,
naming it, and never hands the ratings to that person.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction

from annotation.models import Adjudication, AspectScore, Assignment, Rating
from content.importing.errors import ImportFailed
from content.importing.formats import PairRecord
from content.importing.native import RatingRecord
from content.models import Pair
from projects.models import PlaceholderAccount, Project

_BATCH = 500
_ATTEMPTS = 3


def _accounts_named(names: list[str]) -> dict[str, AbstractBaseUser]:
    user_model = get_user_model()
    found: dict[str, AbstractBaseUser] = {}
    for start in range(0, len(names), _BATCH):
        batch = names[start : start + _BATCH]
        users = user_model.objects.filter(username__in=batch).select_related("placeholder")
        found.update((user.username, user) for user in users)
    return found


def _refuse_people(found: dict, records: dict[str, int | None], project: Project) -> None:
    for name in sorted(found):
        placeholder = getattr(found[name], "placeholder", None)
        if placeholder is None:
            raise ImportFailed(
                f"the account {name!r} belongs to a person, not to imported ratings; an "
                "operator renames that account, or change the annotator id in the file",
                records.get(name),
            )
        # Names of two projects can meet ("imported-lead-a" is project a's adjudicator and
        # project lead's rater a): one project's imported ratings never join another's.
        if placeholder.project_id not in (None, project.pk):
            raise ImportFailed(
                f"the account {name!r} holds another project's imported ratings; change the "
                "annotator id in the file",
                records.get(name),
            )


def placeholder_users(project: Project, records: dict[str, int | None]) -> dict:
    """Username → placeholder account (inactive, no usable password), made when missing.
    `records` maps each name to the record that needs it (None: no single record), for the
    refusal when a person's account holds the name."""
    user_model = get_user_model()
    wanted = sorted(records)
    for _ in range(_ATTEMPTS):
        found = _accounts_named(wanted)
        _refuse_people(found, records, project)
        missing = [name for name in wanted if name not in found]
        if not missing:
            return found
        fresh = []
        for name in missing:
            user = user_model(username=name, is_active=False)
            user.set_unusable_password()
            fresh.append(user)
        try:
            # Without ignore_conflicts: a name made meanwhile (a concurrent import, or an
            # operator) must not be taken for ours; the savepoint undoes both, and we read again.
            with transaction.atomic():
                user_model.objects.bulk_create(fresh, batch_size=_BATCH)
                PlaceholderAccount.objects.bulk_create(
                    [PlaceholderAccount(user=user, project=project) for user in fresh],
                    batch_size=_BATCH,
                )
        except IntegrityError:
            continue
        found.update((user.username, user) for user in fresh)
        return found
    raise ImportFailed("the imported raters' accounts kept changing meanwhile; import again")


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
    first_record: dict[str, int | None] = {}  # each rater's name → the first record naming it
    for (record, _), (_, items) in zip(rows, by_pair, strict=True):
        for item in items:
            first_record.setdefault(_rater_name(project, item.annotator), record.number)
    if not first_record:
        return 0
    raters = placeholder_users(project, first_record)
    assignments: list[Assignment] = []
    ratings: list[Rating] = []
    aspects: list[AspectScore] = []
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
    lead = placeholder_users(project, {name: None})[name]
    for adjudication, pair in decided:
        adjudication.pair = pair
        adjudication.lead = lead
    Adjudication.objects.bulk_create([a for a, _ in decided], batch_size=_BATCH)
    return len(decided)
