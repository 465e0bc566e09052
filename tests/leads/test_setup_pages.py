"""A lead creates a project and its tasks, and changes them, from the pages alone."""

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from annotation.models import Rating
from content.models import Pair
from projects.models import Membership, Project, Task
from setup.services import default_aspects
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

PROJECT = {
    "slug": "bench-1",
    "name": "Bench <one>",
    "scale_points": 7,
    "annotators_per_pair": 3,
    "max_span": 4,
    "ambiguous_half_width": 0.5,
    "ensemble_threshold": 0.9,
    "lease_minutes": 30,
    "edit_grace_minutes": 10,
    "target_half_width": 0.03,
    "judge_labels_alpha": 0.1,
    "judge_labels_delta": 0.05,
    "guidelines": "Rate **carefully**.",
}


@pytest.fixture
def creator(client):
    user = User.objects.create_user("maker", password="pw-annotate-1")
    user.user_permissions.add(Permission.objects.get(codename="add_project"))
    client.force_login(user)
    return user


def test_a_lead_with_the_right_creates_a_project_and_leads_it(client, creator):
    answer = client.post(reverse("project-new"), PROJECT)
    assert answer.status_code == 302
    assert answer["Location"] == reverse("task-new", args=["bench-1"])
    project = Project.objects.get(slug="bench-1")
    assert project.name == "Bench <one>" and project.guidelines == "Rate **carefully**."
    assert Membership.objects.get(project=project).user == creator
    assert Membership.objects.get(project=project).role == "lead"
    home = client.get("/").content.decode()
    assert "Bench &lt;one&gt;" in home and reverse("project-new") in home


def test_without_the_right_the_new_project_page_is_refused(client):
    user = User.objects.create_user("plain", password="pw-annotate-1")
    client.force_login(user)
    assert client.get(reverse("project-new")).status_code == 403
    assert client.post(reverse("project-new"), PROJECT).status_code == 403
    assert not Project.objects.exists()
    assert reverse("project-new") not in client.get("/").content.decode()


def test_anonymous_goes_to_the_login(client):
    answer = client.get(reverse("project-new"))
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


@pytest.mark.parametrize(
    ("change", "field"),
    [({"slug": "new"}, "slug"), ({"scale_points": 12}, "scale_points"), ({"slug": "a b"}, "slug")],
)
def test_bad_project_input_is_a_400_naming_the_field(client, creator, change, field):
    answer = client.post(reverse("project-new"), {**PROJECT, **change})
    assert answer.status_code == 400
    assert field in answer.context["form"].errors
    assert not Project.objects.exists()


def test_a_taken_slug_is_a_field_error(client, creator):
    Project.objects.create(slug="bench-1", name="other")
    answer = client.post(reverse("project-new"), PROJECT)
    assert answer.status_code == 400 and "slug" in answer.context["form"].errors


def test_a_new_task_starts_from_its_kinds_aspects_and_edits_keep_rated_ones(client, creator):
    client.post(reverse("project-new"), PROJECT)
    url = reverse("task-new", args=["bench-1"])
    answer = client.post(url, {"slug": "t2i", "name": "Text to image", "kind": "t2i"})
    assert answer.status_code == 302
    task = Task.objects.get(slug="t2i")
    assert task.aspects == default_aspects("t2i")

    edit = reverse("task-edit", args=["bench-1", "t2i"])
    page = client.get(edit).content.decode()
    assert "faithfulness | Faithfulness to the prompt" in page
    answer = client.post(
        edit,
        {
            "slug": "t2i",
            "name": "T2I",
            "kind": "t2i",
            "aspects": "faithfulness | Faithful\nstyle | Style | Matches the asked style",
            "guidelines": "# Look closely",
        },
    )
    assert answer.status_code == 302
    task.refresh_from_db()
    assert [a["key"] for a in task.aspects] == ["faithfulness", "style"]
    assert task.aspects[1]["help"] == "Matches the asked style"


def test_aspect_lines_are_checked(client, creator):
    client.post(reverse("project-new"), PROJECT)
    answer = client.post(
        reverse("task-new", args=["bench-1"]),
        {"slug": "x", "name": "X", "kind": "other", "aspects": "ok | Fine\nok | Again\nbad key!"},
    )
    assert answer.status_code == 400
    errors = answer.context["form"].errors["aspects"]
    assert any("listed twice" in e for e in errors) and any("line 3" in e for e in errors)
    assert not Task.objects.exists()


@pytest.fixture
def rated(tmp_path, client):
    task = queued_pairs(tmp_path, project_slug="rated", count=2)
    lead = member("boss", task.project, role="lead")
    rater = member("rater", task.project)
    pair = Pair.objects.filter(task=task).first()
    from annotation.services.assignments import assignment_claim
    from annotation.services.ratings import RatingInput, rating_submit

    assignment = assignment_claim(rater, task)
    aspects = {a["key"]: 4 for a in task.aspects}
    rating_submit(assignment.pk, rater, RatingInput(overall=6, aspects=aspects))
    assert Rating.objects.filter(pair__task=task).exists() and pair is not None
    client.force_login(lead)
    return task


def test_a_rated_task_keeps_its_slug_and_rated_aspects(client, rated):
    edit = reverse("task-edit", args=["rated", rated.slug])
    base = {"slug": rated.slug, "name": "Renamed", "kind": rated.kind, "guidelines": ""}
    keys = [a["key"] for a in rated.aspects]
    answer = client.post(edit, {**base, "slug": "other", "aspects": "\n".join(keys)})
    assert answer.status_code == 400 and "slug" in answer.context["form"].errors
    answer = client.post(edit, {**base, "aspects": keys[0]})
    assert answer.status_code == 400 and "aspects" in answer.context["form"].errors
    answer = client.post(edit, {**base, "aspects": "\n".join([*keys, "extra | Extra"])})
    assert answer.status_code == 302
    rated.refresh_from_db()
    assert rated.name == "Renamed" and rated.aspects[-1]["key"] == "extra"


def test_k_cannot_change_once_rated_but_n_can_and_redecides(client, rated):
    url = reverse("project-settings", args=["rated"])
    project = rated.project
    values = {name: getattr(project, name) for name in PROJECT if name != "slug"}
    answer = client.post(url, {**values, "scale_points": 5})
    assert answer.status_code == 400 and "scale_points" in answer.context["form"].errors
    answer = client.post(url, {**values, "annotators_per_pair": 1})
    assert answer.status_code == 302
    project.refresh_from_db()
    assert project.annotators_per_pair == 1
    assert Pair.objects.filter(task=rated, status__in=["kept", "dropped"]).count() == 1


def test_strangers_get_404_annotators_403(client, rated, tmp_path):
    other = queued_pairs(tmp_path, project_slug="elsewhere", count=1)
    stranger = member("stranger", other.project, role="lead")
    annotator = User.objects.get(username="rater")
    urls = [
        reverse("project-settings", args=["rated"]),
        reverse("task-new", args=["rated"]),
        reverse("task-edit", args=["rated", rated.slug]),
        reverse("project-data", args=["rated"]),
    ]
    for user, status in ((stranger, 404), (annotator, 403)):
        client.force_login(user)
        for url in urls:
            assert client.get(url).status_code == status, (user, url)
        assert client.post(reverse("project-queue", args=["rated"])).status_code == status
        preview = reverse("guidelines-preview", args=["rated"])
        assert client.post(preview, {"guidelines": "x"}).status_code == status
    # a missing project and a missing task answer like a stranger's
    client.force_login(User.objects.get(username="boss"))
    assert client.get(reverse("project-settings", args=["nope"])).status_code == 404
    assert client.get(reverse("task-edit", args=["rated", "nope"])).status_code == 404


def test_the_guidelines_preview_renders_markdown_and_drops_scripts(client, rated):
    answer = client.post(
        reverse("guidelines-preview", args=["rated"]),
        {"guidelines": "# Title\n\n<script>alert(1)</script> **bold**"},
    )
    html = answer.content.decode()
    assert answer.status_code == 200
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert "<script" not in html
