"""Fixtures of the annotation tests: a project with queued pairs and its annotators."""

import pytest

from tests.factories import member, queued_pairs


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path)


@pytest.fixture
def annotators(task):
    return [member(f"ann{i}", task.project) for i in range(1, 5)]


@pytest.fixture
def expert(tmp_path):
    """An annotator of a 7-point t2i task (aspects: faithfulness, quality) with 5 pairs; the
    browser tests log in with member()'s default password."""
    return member("expert", queued_pairs(tmp_path, count=5).project)
