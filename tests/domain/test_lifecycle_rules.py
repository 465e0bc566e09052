"""A pair's lifecycle states each rule once for Python and once for SQL (content/lifecycle.py):
on every mean three experts can reach and every span, under several project settings, the
keep/drop twins select exactly the pairs the Python rules name; the grace period and its
query twin agree at the boundary."""

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.services.consensus import consensus_of
from content import lifecycle as rules
from content.models import Pair
from tests.domain.test_constraints import make_pair

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("scale", [6, 7])
def test_every_rule_and_its_query_twin_select_the_same_pairs(scale):
    project = make_pair().project
    project.scale_points = scale
    project.save(update_fields=["scale_points"])
    grid = {}
    for total, span in itertools.product(range(3, 3 * scale + 1), range(scale)):
        pair = make_pair(project=project, consensus_mean=total / 3, consensus_span=span)
        grid[pair.pk] = (total / 3, span)
    rated = Pair.objects.filter(pk__in=grid)
    for max_span, half_width in itertools.product((0, 1, 2, 4), (0.0, 1 / 3, 0.5, 1.0)):
        project.max_span, project.ambiguous_half_width = max_span, half_width
        for nearly in (False, True):
            by_span = {
                pk for pk, (_m, s) in grid.items() if rules.too_spread(s, project, nearly=nearly)
            }
            by_mean = {
                pk for pk, (m, _s) in grid.items() if rules.ambiguous(m, project, nearly=nearly)
            }
            assert (
                set(
                    rated.filter(rules.too_spread_q(project, nearly=nearly)).values_list(
                        "pk", flat=True
                    )
                )
                == by_span
            )
            assert (
                set(
                    rated.filter(rules.ambiguous_q(project, nearly=nearly)).values_list(
                        "pk", flat=True
                    )
                )
                == by_mean
            )
        kept = {pk for pk, (m, s) in grid.items() if rules.kept(m, s, project)}
        assert set(rated.filter(rules.kept_q(project)).values_list("pk", flat=True)) == kept


def test_the_decision_reads_the_rules():
    project = make_pair().project  # K = 7, centre 4
    project.max_span, project.ambiguous_half_width = 2, 0.5
    assert consensus_of([6, 6, 7], project).keep  # mean 6.33, span 1
    assert not consensus_of([4, 6, 7], project).keep  # span 3 > 2
    assert not consensus_of([4, 4, 5], project).keep  # mean 4.33, within 4 ± 0.5
    assert consensus_of([4, 5, 5], project).keep  # mean 4.67, just outside the band
    assert not consensus_of([3, 4, 5], project).keep  # mean exactly the centre


@pytest.mark.parametrize("past_the_boundary", [timedelta(0), timedelta(microseconds=1)])
def test_the_grace_period_and_its_query_twin_agree_at_the_boundary(past_the_boundary):
    """A correction, an undo and the own-work page's final gold answers ask one rule."""
    pair = make_pair()
    project = pair.project
    project.edit_grace_minutes = 10
    now = timezone.now()
    finished = now - timedelta(minutes=10) + past_the_boundary  # on the boundary, or just after
    Pair.objects.filter(pk=pair.pk).update(created_at=finished)
    within = rules.within_grace(project, finished, now)
    assert within is (past_the_boundary > timedelta(0))
    in_query = Pair.objects.filter(rules.within_grace_q(project, "created_at", now)).exists()
    assert in_query is within
    assert rules.within_grace(project, None, now) is False
