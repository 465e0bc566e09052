"""Fixtures of the annotation tests: a project with queued pairs and its annotators."""

import pytest

from tests.factories import member, queued_pairs


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path)


@pytest.fixture
def annotators(task):
    return [member(f"ann{i}", task.project) for i in range(1, 5)]
