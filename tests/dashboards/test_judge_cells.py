"""A judge's cell on the judges page names its two figures (classical, prediction-powered),
and rating a sample keeps the prediction-powered line in every cell, saying what it waits for."""

import re

import pytest
from django.urls import reverse

from judging.services.sampling import sample_start
from metrics.judge_ppi import MIN_RATED_ACTIVE
from tests.metrics.test_powered_accuracy import world  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db


def judge_cells(page: str) -> list[str]:
    """The text of each judge's figure cells (the task's and the average), tags removed."""
    body = re.search(r'<table class="numbers sortable" id="judge-table">.*?<tbody>(.*?)</tbody>',
                     page, re.S).group(1)  # fmt: skip
    cells = re.findall(r'<td class="num"[^>]*>(.*?)</td>', body, re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell)).strip() for cell in cells]


def test_each_figure_in_a_judge_cell_says_which_it_is(client, world):  # noqa: F811
    project, _task, _truth, lead = world
    client.force_login(lead)
    cells = judge_cells(client.get(reverse("dash-judges", args=[project.slug])).content.decode())
    assert len(cells) == 6  # three judges, one task and the average
    for cell in cells:
        assert re.match(r"Classical 0\.\d{3}", cell), cell
        assert re.search(r"Prediction-powered 0\.\d{3} \[", cell), cell


def test_rating_a_sample_keeps_the_judge_estimates_on_the_page(client, world):  # noqa: F811
    project, _task, _truth, lead = world
    client.force_login(lead)
    sample_start(project, budget=None)
    cells = judge_cells(client.get(reverse("dash-judges", args=[project.slug])).content.decode())
    task_cells = cells[0::2]
    assert len(task_cells) == 3
    for cell in task_cells:  # 60 rated pairs: the classical figure, and what the sample awaits
        assert re.match(r"Classical 0\.\d{3} \[", cell), cell
        assert f"Prediction-powered — a sample's estimate from {MIN_RATED_ACTIVE} rated" in cell
