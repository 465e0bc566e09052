"""The "judges disagree" filter reads the judges' sets of pairs precomputed with the figures
(dashboards/snapshots.py, page "disagreement"): at ten times MMRB2 reading the verdicts takes
seconds, so after a change the lead sees the last sets at once, told how old they are, while
the refresh runs behind."""

import pytest

from annotation.services.adjudication import pair_adjudicate
from core import outbox
from dashboards import snapshots
from judging.models import Judge
from tests.pair_browser.test_selector import answers, decided
from tests.pair_browser.test_views import signed_in, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def threads(monkeypatch) -> list[tuple[int, str]]:
    """The background refreshes started, recorded instead of run."""
    started: list[tuple[int, str]] = []
    monkeypatch.setattr(
        outbox, "_thread_start", lambda task, project_id, page: started.append((project_id, page))
    )
    return started


def listed(response) -> list[str]:
    assert response.status_code == 200
    return [pair.external_id for pair in response.context["page"].rows]


def test_after_a_change_the_last_sets_show_at_once_said_to_be_behind_then_the_new_ones(
    browsed, settings, threads, django_capture_on_commit_callbacks
):
    project, lead = browsed
    judge = Judge.objects.create(name="contrarian", backend="random", project=project)
    first, second = decided(project, 2)
    answers(judge, first, "against", "against")
    answers(judge, second, "with", "with")
    client = signed_in(lead)
    assert listed(client.get(url(project, judge=judge.pk))) == [first.external_id]

    # Every computation counts as slow, as at ten times MMRB2: a stale set is not recomputed
    # while the lead waits.
    settings.ARBITER_FIGURES_INLINE_MS = 0
    other_side = {"A": "keep_b", "B": "keep_a"}[second.label]
    pair_adjudicate(second.pk, lead, other_side, "the judge was right")  # now it disagrees
    with django_capture_on_commit_callbacks(execute=True):
        behind = client.get(url(project, judge=judge.pk))
    assert listed(behind) == [first.external_id]
    assert "The judges' verdicts as of" in behind.content.decode()
    assert threads == [(project.pk, "disagreement")]  # one refresh behind the page

    snapshots.figures_refresh_run(project.pk, "disagreement")  # what the refresh does
    caught_up = client.get(url(project, judge="any"))
    assert listed(caught_up) == [first.external_id, second.external_id]
    assert "verdicts as of" not in caught_up.content.decode()


def test_while_the_first_sets_are_computed_ahead_the_filter_computes_them_rather_than_wait(
    browsed, threads, django_capture_on_commit_callbacks
):
    project, lead = browsed
    judge = Judge.objects.create(name="contrarian", backend="random", project=project)
    (first,) = decided(project, 1)
    answers(judge, first, "against", "against")
    with django_capture_on_commit_callbacks(execute=True):
        snapshots.figures_prepare(project)  # as after an import: every page's row on its way
    assert (project.pk, "disagreement") in threads
    assert listed(signed_in(lead).get(url(project, judge=judge.pk))) == [first.external_id]


def test_the_sets_name_every_judge_of_the_project_and_their_union(browsed, other_project):
    project, _lead = browsed
    other, _ = other_project
    mine = Judge.objects.create(name="mine", backend="random", project=project)
    quiet = Judge.objects.create(name="quiet", backend="random", project=project)
    operators = Judge.objects.create(name="operator-wide", backend="random")
    theirs = Judge.objects.create(name="theirs", backend="random", project=other)
    pairs = decided(project, 3)
    answers(mine, pairs[0], "against", "against")
    answers(operators, pairs[1], "against", "tie")
    answers(theirs, pairs[2], "against", "against")  # not a judge of this project
    sets = snapshots.SELECTORS["disagreement"](project).pairs
    assert list(sets[str(mine.pk)]) == [pairs[0].pk]
    assert list(sets[str(operators.pk)]) == [pairs[1].pk]
    assert list(sets[str(quiet.pk)]) == []
    assert str(theirs.pk) not in sets
    assert list(sets["any"]) == [pairs[0].pk, pairs[1].pk]
