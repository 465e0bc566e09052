"""Dashboard figures are cached until the data under them changes: the key holds a version
made of the latest change to pairs, ratings, verdicts, adjudications and the project's
settings, read with one query."""

import hashlib

from django.core.cache import cache
from django.db.models import Count, Max, OuterRef, Subquery

from annotation.models import Adjudication, Pair, Project, Rating
from judging.models import Verdict

_TIMEOUT = 24 * 3600


def _latest(queryset, field: str):
    return Subquery(
        queryset.order_by()
        .values("pair__project" if queryset.model is not Pair else "project")
        .annotate(v=Max(field))
        .values("v")[:1]
    )


def data_version(project: Project) -> str:
    row = (
        Project.objects.filter(pk=project.pk)
        .annotate(
            v_pairs=_latest(Pair.objects.filter(project=OuterRef("pk")), "updated_at"),
            v_ratings=_latest(Rating.objects.filter(pair__project=OuterRef("pk")), "updated_at"),
            v_rating_count=Subquery(
                Rating.objects.filter(pair__project=OuterRef("pk"))
                .order_by()
                .values("pair__project")
                .annotate(n=Count("id"))
                .values("n")[:1]
            ),
            v_verdicts=_latest(Verdict.objects.filter(pair__project=OuterRef("pk")), "created_at"),
            v_verdict_count=Subquery(
                Verdict.objects.filter(pair__project=OuterRef("pk"))
                .order_by()
                .values("pair__project")
                .annotate(n=Count("id"))
                .values("n")[:1]
            ),
            v_adjudications=_latest(
                Adjudication.objects.filter(pair__project=OuterRef("pk")), "id"
            ),
        )
        .values_list(
            "v_pairs",
            "v_ratings",
            "v_rating_count",
            "v_verdicts",
            "v_verdict_count",
            "v_adjudications",
            "scale_points",
            "annotators_per_pair",
            "max_span",
            "ambiguous_half_width",
        )  # fmt: skip
        .get()
    )
    return "|".join(str(value) for value in row)


def cached(project: Project, page: str, compute):
    """compute() once per version of the project's data."""
    version = hashlib.sha1(data_version(project).encode()).hexdigest()
    key = f"arbiter:dashboard:{page}:{project.pk}:{version}"
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, _TIMEOUT)
    return value
