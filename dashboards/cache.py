"""Dashboard figures are cached until the data under them changes: the key holds a version
made of the latest change to pairs, ratings, verdicts, adjudications and the project's
settings, read with one query."""

import hashlib

from django.core.cache import cache
from django.db.models import Count, Max, Q

from annotation.models import (
    Adjudication,
    AnnotatorPause,
    Pair,
    Project,
    Qualification,
    Rating,
    Task,
)
from judging.models import Verdict

_TIMEOUT = 24 * 3600


def data_version(project: Project) -> str:
    """What the dashboards' figures depend on, one aggregate query per table (each a single
    pass; the verdicts' by a covering index)."""
    parts = [
        Pair.objects.filter(project=project).aggregate(v=Max("updated_at"), n=Count("id")),
        Rating.objects.filter(pair__project=project).aggregate(v=Max("updated_at"), n=Count("id")),
        Verdict.objects.filter(pair__project=project).aggregate(v=Max("created_at"), n=Count("id")),
        Adjudication.objects.filter(pair__project=project).aggregate(v=Max("id"), n=Count("id")),
        AnnotatorPause.objects.filter(task__project=project).aggregate(
            v=Max("readmitted_at"), n=Count("id")
        ),
        Qualification.objects.filter(task__project=project).aggregate(
            v=Count("id", filter=Q(passed=True)), n=Count("id")
        ),
    ]
    # The quality-control settings of the tasks (thresholds, speed floor) shape the figures.
    quality = list(
        Task.objects.filter(project=project)
        .order_by("pk")
        .values_list(
            "pk",
            "gold_rate",
            "gold_action",
            "gold_min_accuracy",
            "gold_min_answers",
            "min_active_seconds",
            "qualification_pass",
        )
    )
    settings = (
        project.scale_points,
        project.annotators_per_pair,
        project.max_span,
        project.ambiguous_half_width,
    )
    return "|".join(f"{part['v']}/{part['n']}" for part in parts) + f"|{settings}|{quality}"


def cached(project: Project, page: str, compute):
    """compute() once per version of the project's data."""
    version = hashlib.sha1(data_version(project).encode()).hexdigest()
    key = f"arbiter:dashboard:{page}:{project.pk}:{version}"
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, _TIMEOUT)
    return value
