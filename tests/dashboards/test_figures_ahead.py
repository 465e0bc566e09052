"""Figures ready before anyone asks: an import, a finished judge run or a decided
pair starts the background refresh of the dashboards' figures; a page whose first figures are
still being computed says so and looks again, instead of computing them a second time."""

import pytest
from django.urls import reverse

from annotation.services.adjudication import pair_adjudicate
from content.models import Pair
from core import outbox
from dashboards import snapshots
from dashboards.models import FigureSnapshot
from projects.events import publish

pytestmark = pytest.mark.django_db(transaction=True)  # the judge runs and events run on commit


@pytest.fixture
def started(rated, monkeypatch, settings):
    """The background refreshes started, recorded instead of run (after the rated project's
    judge runs have run)."""
    settings.ARBITER_FIGURES_AHEAD = True
    threads: list[tuple[int, str]] = []
    monkeypatch.setattr(
        outbox, "_thread_start", lambda task, project_id, page: threads.append((project_id, page))
    )
    return threads


def test_a_decision_computes_every_page_ahead_and_the_page_waits_for_it(client, rated, started):
    project, lead = rated
    pair = Pair.objects.filter(project=project).first()
    pair_adjudicate(pair.pk, lead, "keep_a", "the left one follows the prompt")
    pages = ["agreement", "disagreement", "judges", "models"]  # and the pair browser's sets
    assert sorted(page for _, page in started) == pages
    assert (
        FigureSnapshot.objects.filter(project=project, refreshing_since__isnull=False).count() == 4
    )

    client.force_login(lead)
    waiting = client.get(reverse("dash-judges", args=[project.slug]))
    assert waiting.status_code == 200 and waiting["Retry-After"] == "5"
    body = waiting.content.decode()
    assert "being computed" in body and 'http-equiv="refresh"' in body
    assert 'aria-label="Project pages"' in body  # the tabs stay

    for project_id, page in started:  # what the background threads do
        snapshots.figures_refresh_run(project_id, page)
    ready = client.get(reverse("dash-judges", args=[project.slug]))
    assert "being computed" not in ready.content.decode() and ready.context["table"]


def test_an_import_or_a_finished_run_starts_the_refresh_once_per_page(rated, started):
    project, _lead = rated
    publish(project, "import.finished", {"job": 1})
    assert len(started) == 4
    publish(project, "run.finished", {"run": 1})  # the first refreshes still hold the rows
    assert len(started) == 4
    publish(project, "export.ready", {"job": 1})  # moves no figure
    assert len(started) == 4


def test_nothing_is_computed_ahead_when_turned_off(rated, started, settings):
    settings.ARBITER_FIGURES_AHEAD = False
    project, _lead = rated
    publish(project, "import.finished", {"job": 1})
    assert started == [] and not FigureSnapshot.objects.exists()
