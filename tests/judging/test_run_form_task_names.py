"""The judge-run form offers each task by the name its lead gave it, not by its slug."""

import re

import pytest
from django.urls import reverse

from projects.models import Project, Task
from tests.factories import member

pytestmark = pytest.mark.django_db


def _task_options(html: str) -> list[str]:
    select = re.search(r'<select name="task"[^>]*>(.*?)</select>', html, re.S)
    assert select, "the run form has a task field"
    return [text.strip() for text in re.findall(r"<option[^>]*>(.*?)</option>", select[1], re.S)]


def test_the_run_form_names_each_task_by_its_name(client):
    project = Project.objects.create(slug="bench", name="Bench")
    Task.objects.create(project=project, slug="t2i-v2", name="Text to image, round 2")
    Task.objects.create(project=project, slug="edit", name="Editing <b>", kind="edit")
    client.force_login(member("boss", project, role="lead"))

    page = client.get(reverse("run-list", args=[project.slug]))

    assert page.status_code == 200
    options = _task_options(page.content.decode())
    assert options[1:] == ["Editing &lt;b&gt;", "Text to image, round 2"]
    assert not any("bench/" in option or option == "t2i-v2" for option in options)


def test_a_run_started_from_the_form_still_names_the_task_by_id(client):
    project = Project.objects.create(slug="bench", name="Bench")
    task = Task.objects.create(project=project, slug="t2i", name="Text to image")
    client.force_login(member("boss", project, role="lead"))
    other = Project.objects.create(slug="other", name="Other")
    foreign = Task.objects.create(project=other, slug="t2i", name="Theirs")

    page = client.get(reverse("run-list", args=[project.slug]))
    assert f'value="{task.pk}"' in page.content.decode()
    assert f'value="{foreign.pk}"' not in page.content.decode()
