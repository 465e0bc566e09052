"""Fixtures of the conversation tests: one queued pair, its lead and two annotators who both
hold it (opposite sides), and a second project with its own lead and annotator."""

from dataclasses import dataclass

import pytest

from annotation.models import Assignment
from annotation.services.assignments import assignment_claim
from tests.factories import member, queued_pairs


@dataclass
class Scene:
    task: object
    lead: object
    asker: object
    other: object
    asked_on: Assignment  # the asker's assignment (sides not swapped)
    other_on: Assignment  # the other annotator's, on the same pair (swapped)
    stranger_lead: object  # leads another project
    stranger: object  # annotates another project
    stranger_on: Assignment

    @property
    def project(self):
        return self.task.project

    @property
    def pair(self):
        return self.asked_on.pair


def _claim(user, task, swapped: bool) -> Assignment:
    assignment = assignment_claim(user, task)
    Assignment.objects.filter(pk=assignment.pk).update(swapped=swapped)
    assignment.refresh_from_db()
    return assignment


@pytest.fixture
def scene(tmp_path) -> Scene:
    task = queued_pairs(tmp_path, project_slug="talk", count=1, annotators_per_pair=3)
    other_task = queued_pairs(tmp_path, project_slug="elsewhere", count=1)
    lead = member("lead", task.project, role="lead")
    asker, other = member("asker", task.project), member("other", task.project)
    stranger = member("stranger", other_task.project)
    return Scene(
        task=task,
        lead=lead,
        asker=asker,
        other=other,
        asked_on=_claim(asker, task, swapped=False),
        other_on=_claim(other, task, swapped=True),
        stranger_lead=member("stranger-lead", other_task.project, role="lead"),
        stranger=stranger,
        stranger_on=_claim(stranger, other_task, swapped=False),
    )
