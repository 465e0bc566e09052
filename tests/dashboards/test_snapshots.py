"""The heavy dashboard pages are served from figures precomputed into a table
(dashboards/snapshots.py): with the cache empty they compute nothing, a change of the data is
seen, and a large project's lead gets the last figures at once while they are refreshed."""

import json
import pickle
import re
from dataclasses import dataclass
from typing import TypedDict

import pytest
from django.core.cache import cache
from django.urls import reverse

from annotation.models import Rating
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from core import outbox
from dashboards import snapshots
from dashboards.models import FigureSnapshot
from dashboards.selectors.models import ModelFigures
from judging.models import Judge
from judging.services.runs import judge_run_start
from judging.services.verdict_import import verdicts_import
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = ("agreement", "judges", "models")


def _figures_html(response) -> str:
    """The page without what differs on every response (CSRF token, CSP nonce)."""
    body = response.content.decode()
    return re.sub(r'(value|nonce)="[^"]*"', r'\1=""', body)


def _view(client, project, page):
    response = client.get(reverse(f"dash-{page}", args=[project.slug]))
    assert response.status_code == 200
    return response


def _computing_fails(monkeypatch):
    def refuse(project):
        raise AssertionError("computed the figures again")

    for page in PAGES:
        monkeypatch.setitem(snapshots.SELECTORS, page, refuse)


@pytest.mark.parametrize("page", PAGES)
def test_with_the_cache_empty_the_page_is_served_from_the_table(client, rated, page, monkeypatch):
    project, lead = rated
    client.force_login(lead)
    first = _figures_html(_view(client, project, page))
    assert FigureSnapshot.objects.filter(project=project, page=page).count() == 1
    cache.clear()
    _computing_fails(monkeypatch)
    again = _figures_html(_view(client, project, page))
    assert again == first  # every figure, and nothing computed


def test_a_new_rating_is_seen_at_once_on_a_small_project(client, rated):
    project, lead = rated
    client.force_login(lead)
    before = _view(client, project, "agreement").context["tasks"][0]["ratings"]
    _rate_one_more(member("late", project), project)
    page = _view(client, project, "agreement")
    assert page.context["tasks"][0]["ratings"] == before + 1
    assert "figures-as-of" not in page.content.decode()


def test_a_slow_page_shows_its_last_figures_at_once_and_refreshes_behind(
    client, rated, monkeypatch
):
    project, lead = rated
    client.force_login(lead)
    before = _view(client, project, "agreement").context["tasks"][0]["ratings"]
    # As on a project ten times MMRB2: the last computation took a minute.
    FigureSnapshot.objects.filter(project=project, page="agreement").update(compute_seconds=60)
    started = []
    monkeypatch.setattr(
        outbox, "_thread_start", lambda task, project_id, page: started.append((project_id, page))
    )
    _rate_one_more(member("late", project), project)

    stale = _view(client, project, "agreement")
    body = stale.content.decode()
    assert stale.context["tasks"][0]["ratings"] == before  # the last figures, not a wait
    assert 'id="figures-as-of"' in body and "recomputed in the background" in body
    assert started == [(project.pk, "agreement")]
    row = FigureSnapshot.objects.get(project=project, page="agreement")
    assert row.refreshing_since is not None
    # A second view while the refresh runs starts no other.
    _view(client, project, "agreement")
    assert len(started) == 1

    snapshots.figures_refresh_run(project.pk, "agreement")  # what the thread or task does
    fresh = _view(client, project, "agreement")
    assert fresh.context["tasks"][0]["ratings"] == before + 1
    assert "figures-as-of" not in fresh.content.decode()
    assert FigureSnapshot.objects.get(pk=row.pk).refreshing_since is None


def _rate_one_more(user, project):
    task = project.tasks.get()
    assignment = assignment_claim(user, task)
    if assignment is None:  # all 8 pairs have their ratings: the lead asks for one more
        from annotation.services.adjudication import pair_request_annotator

        pair = Pair.objects.filter(project=project).order_by("id").first()
        pair_request_annotator(pair.pk, member("asker", project, role="lead"), "one more")
        assignment = assignment_claim(user, task)
    rating_submit(assignment.pk, user, RatingInput(overall=6))


def test_a_refresh_that_fails_lets_the_next_one_start(rated, monkeypatch):
    project, _lead = rated
    snapshots.figures_for(project, "judges")
    FigureSnapshot.objects.filter(project=project, page="judges").update(version="old")

    def broken(project):
        raise RuntimeError("boom")

    monkeypatch.setitem(snapshots.SELECTORS, "judges", broken)
    assert snapshots._claim(project.pk, "judges")
    with pytest.raises(RuntimeError):
        snapshots.figures_refresh_run(project.pk, "judges")
    assert FigureSnapshot.objects.get(project=project, page="judges").refreshing_since is None
    assert snapshots._claim(project.pk, "judges")


def test_the_periodic_refresh_recomputes_only_what_changed(rated):
    project, _lead = rated
    for page in PAGES:
        snapshots.figures_for(project, page)
    assert snapshots.stale_refresh() == 0
    judge_run_start(Judge.objects.create(name="coin-2", backend="random"), project)
    assert snapshots.stale_refresh() == 3  # every page reads the verdicts' version
    versions = set(FigureSnapshot.objects.values_list("version", flat=True))
    assert versions == {snapshots.data_version(project)}
    assert snapshots.stale_refresh() == 0


def test_every_way_verdicts_arrive_moves_the_data_version(rated, tmp_path):
    project, _lead = rated
    version = snapshots.data_version(project)
    assert snapshots.data_version(project) == version  # reading changes nothing

    judge_run_start(Judge.objects.create(name="coin-3", backend="random"), project)  # chunks
    assert snapshots.data_version(project) != version
    version = snapshots.data_version(project)

    pair = Pair.objects.filter(project=project).order_by("id").first()
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps({pair.external_id: {"forward": [{"judgement": "A"}]}}))
    verdicts_import(
        predictions, project_slug=project.slug, task_slug="t2i", judge_name="file-judge"
    )
    assert snapshots.data_version(project) != version
    version = snapshots.data_version(project)
    verdicts_import(  # the same file again: the same verdicts, but another import
        predictions, project_slug=project.slug, task_slug="t2i", judge_name="file-judge"
    )
    assert snapshots.data_version(project) != version


def test_a_stale_page_never_starts_a_refresh_for_a_stranger(client, rated, tmp_path):
    """The figures are the project's: another project's lead gets a 404, and no work."""
    project, _lead = rated
    other = queued_pairs(tmp_path / "other", project_slug="other", task_slug="t2i", count=1)
    stranger = member("stranger", other.project, role="lead")
    snapshots.figures_for(project, "agreement")
    client.force_login(stranger)
    response = client.get(reverse("dash-agreement", args=[project.slug]))
    assert response.status_code == 404
    row = FigureSnapshot.objects.get(project=project, page="agreement")
    assert row.refreshing_since is None


def test_a_corrected_rating_moves_the_data_version(rated):
    """Ratings are not scanned for the version: a correction within the grace period must
    still reach it, through its pair's derived columns."""
    project, _lead = rated
    user = member("corrector", project)
    _rate_one_more(user, project)
    version = snapshots.data_version(project)
    rating = Rating.objects.get(annotator=user)
    rating_submit(rating.assignment_id, user, RatingInput(overall=1))  # 6 -> 1
    assert Rating.objects.get(pk=rating.pk).overall != 6
    assert snapshots.data_version(project) != version


def test_a_row_the_code_can_no_longer_read_is_recomputed_not_a_500(client, rated):
    project, lead = rated
    client.force_login(lead)
    _view(client, project, "judges")
    FigureSnapshot.objects.filter(project=project, page="judges").update(
        figures=b"\x80\x05not a pickle", compute_seconds=60
    )
    page = _view(client, project, "judges")
    assert "figures-as-of" not in page.content.decode()
    assert page.context["table"]  # computed again


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize(
    "written",
    [
        # As the code before typed figures pickled them: a plain dict.
        lambda page, figures: pickle.dumps(snapshots.figures_context(figures)),
        # Figures of a shape the code no longer has (a field added or retyped since).
        lambda page, figures: pickle.dumps(("a shape of older code", figures)),
    ],
    ids=["pickled dict", "older shape"],
)
def test_a_row_of_an_older_shape_is_recomputed_not_a_500(client, rated, page, written):
    project, lead = rated
    client.force_login(lead)
    _view(client, project, page)
    row = FigureSnapshot.objects.get(project=project, page=page)
    current = snapshots._unpickled(row)
    # Current by its version and slow: only its shape keeps it from being shown.
    FigureSnapshot.objects.filter(pk=row.pk).update(
        figures=written(page, current), compute_seconds=60
    )
    again = _view(client, project, page)
    assert "figures-as-of" not in again.content.decode()  # computed again, not the old row
    shape, stored = pickle.loads(FigureSnapshot.objects.get(pk=row.pk).figures)
    assert shape == snapshots.SHAPES[page] and isinstance(stored, snapshots.KINDS[page])


def test_a_shape_is_its_fields_names_and_types_followed_into_nested_types():
    @dataclass(frozen=True)
    class Before:
        rows: list[ModelFigures]

    @dataclass(frozen=True)
    class After:
        rows: list[ModelFigures]

    After.__qualname__ = Before.__qualname__
    assert snapshots.shape_of(After) == snapshots.shape_of(Before)

    class Row(TypedDict):
        value: float

    @dataclass(frozen=True)
    class Retyped:
        rows: list[Row]

    class RowWithMore(TypedDict):
        value: float
        interval: tuple[float, float] | None

    @dataclass(frozen=True)
    class Extended:
        rows: list[RowWithMore]

    RowWithMore.__qualname__ = Row.__qualname__
    Extended.__qualname__ = Retyped.__qualname__
    assert snapshots.shape_of(Extended) != snapshots.shape_of(Retyped)  # a nested key added
    assert snapshots.shape_of(Retyped) != snapshots.shape_of(Before)


def test_a_changed_shape_makes_every_row_stale(rated, monkeypatch):
    project, _lead = rated
    version = snapshots.data_version(project)
    monkeypatch.setattr(snapshots, "SHAPES_DIGEST", snapshots.shape_of(ModelFigures))
    assert snapshots.data_version(project) != version


def test_a_renamed_task_moves_the_data_version(rated):
    project, _lead = rated
    version = snapshots.data_version(project)
    project.tasks.update(name="Renamed task")
    assert snapshots.data_version(project) != version


def test_with_the_broker_down_a_stale_page_still_answers_and_frees_its_claim(
    client, rated, monkeypatch, settings
):
    project, lead = rated
    client.force_login(lead)
    _view(client, project, "agreement")
    FigureSnapshot.objects.filter(project=project, page="agreement").update(compute_seconds=60)
    _rate_one_more(member("late", project), project)
    settings.CELERY_TASK_ALWAYS_EAGER = False  # the full stack, its broker unreachable
    from dashboards import tasks

    def unreachable(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    monkeypatch.setattr(tasks.figures_refresh, "apply_async", unreachable)
    page = _view(client, project, "agreement")
    assert 'id="figures-as-of"' in page.content.decode()
    assert FigureSnapshot.objects.get(project=project, page="agreement").refreshing_since is None
