"""`manage.py demo`: an idempotent demo project with drawn, judgeable image pairs."""

import io

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.utils import timezone
from PIL import Image

from annotation.models import AspectScore, Rating
from annotation.selectors.progress import annotator_progress
from content.models import Asset, Generator, Pair, Prompt, Response
from demo.history import EXPERTS
from demo.pairs import TASKS, build_records
from demo.seed import DEFAULT_PASSWORD, demo_seed
from exports.models import ExportJob
from judging.models import TaskEnsemble, Verdict
from projects.models import Membership, Project, Task

USERNAMES = ["annotator1", "annotator2", "annotator3", "lead"]


@pytest.fixture
def demo_settings(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings


def run_demo(*args) -> str:
    out = io.StringIO()
    call_command("demo", *args, stdout=out)
    return out.getvalue()


def counts() -> dict:
    models = (Project, Task, Pair, Prompt, Response, Generator, Asset, Membership)
    result = {model.__name__: model.objects.count() for model in models}
    result["User"] = get_user_model().objects.count()
    result["statuses"] = sorted(Pair.objects.values_list("status", flat=True))
    return result


def image_hashes(parts) -> list[str]:
    return [value for kind, value in parts or [] if kind == "image"]


@pytest.mark.django_db
def test_running_twice_creates_nothing_new(demo_settings):
    first_output = run_demo()
    first = counts()
    second_output = run_demo()
    assert counts() == first
    assert first["Project"] == 1
    assert first["Task"] == 4
    # the queue, the finished work, candidates, gold checks
    assert first["Pair"] == 4 * (10 + 6 + 3 + 2)
    assert first["statuses"].count("gold") == 4 * 2
    assert first["User"] == 7  # the four logins and three experts who did the finished work
    assert first["Membership"] == 7
    assert first["Asset"] > 76
    assert "(10 new)" in first_output
    assert "(0 new)" in second_output and "(10 new)" not in second_output
    for output in (first_output, second_output):
        assert "http://127.0.0.1:8000/" in output
        assert DEFAULT_PASSWORD in output
        for username in USERNAMES:
            assert username in output
        for slug in TASKS:
            assert slug in output


@pytest.mark.django_db
def test_project_has_four_tasks_of_queued_unlabelled_pairs(demo_settings):
    run_demo()
    project = Project.objects.get(slug="demo")
    assert project.name == "Demo benchmark"
    assert (project.scale_points, project.annotators_per_pair) == (7, 3)
    assert "7-point" in project.guidelines
    tasks = {task.slug: task for task in project.tasks.all()}
    assert set(tasks) == {"t2i", "edit", "interleaved", "reasoning"}
    for slug, task in tasks.items():
        assert task.kind == slug
        assert task.aspects and task.guidelines
        queue_ids = [f"demo-{slug}-{n:02d}" for n in range(1, 11)]
        pairs = list(task.pairs.filter(external_id__in=queue_ids))
        assert len(pairs) == 10
        assert {pair.status for pair in pairs} == {Pair.Status.QUEUED}
        assert {(pair.label, pair.reference_label, pair.rating_count) for pair in pairs} == {
            ("", "", 0)
        }
        # The scenes vary: ten different prompts, and the two responses always differ.
        assert len({pair.prompt_id for pair in pairs}) == 10
        for pair in pairs:
            assert pair.response_a.content != pair.response_b.content
    same_model = list(Pair.objects.values_list("same_model", flat=True))
    assert any(same_model) and not all(same_model)


@pytest.mark.django_db
def test_every_image_is_a_stored_asset_pillow_can_open(demo_settings):
    run_demo()
    referenced = set()
    for pair in Pair.objects.select_related("task", "prompt", "response_a", "response_b"):
        prompt_images = image_hashes(pair.prompt.content)
        a_images = image_hashes(pair.response_a.content)
        b_images = image_hashes(pair.response_b.content)
        assert a_images and b_images
        kind = pair.task.kind
        assert bool(prompt_images) == (kind in ("edit", "reasoning"))
        if kind == "interleaved":
            assert 2 <= len(a_images) == len(b_images) <= 3
            assert len(pair.response_a.content) == 2 * len(a_images)  # text, image, text, ...
        if kind == "reasoning":
            assert [k for k, _ in pair.response_a.content] == ["text", "image", "text"]
        referenced.update(prompt_images + a_images + b_images)
    assets = Asset.objects.filter(sha256__in=referenced)
    assert assets.count() == len(referenced) == Asset.objects.count()
    for asset in assets:
        assert str(demo_settings.MEDIA_ROOT) in asset.file.path
        with Image.open(asset.file.path) as image:
            image.load()
            assert image.size == (asset.width, asset.height)
            assert image.format == asset.format == "PNG"


@pytest.mark.django_db
def test_users_log_in_with_the_default_then_the_given_password(demo_settings):
    run_demo()
    for username in USERNAMES:
        assert authenticate(username=username, password=DEFAULT_PASSWORD) is not None

    output = run_demo("--password", "another-secret")
    assert "another-secret" in output
    for username in USERNAMES:
        assert authenticate(username=username, password=DEFAULT_PASSWORD) is None
        assert authenticate(username=username, password="another-secret") is not None
    assert get_user_model().objects.count() == 7


@pytest.mark.django_db
def test_roles_of_the_demo_users(demo_settings):
    run_demo()
    project = Project.objects.get(slug="demo")
    memberships = {
        m.user.username: m
        for m in Membership.objects.filter(project=project).select_related("user")
    }
    assert set(memberships) == {*USERNAMES, *EXPERTS}
    lead = memberships["lead"]
    assert lead.role == Membership.Role.LEAD
    assert not lead.user.is_staff and not lead.user.is_superuser  # the admin is operators'
    assert lead.user.has_perm("projects.add_project")  # the walkthrough creates a project
    assert not memberships["annotator1"].user.has_perm("projects.add_project")
    for username in USERNAMES[:3]:
        member = memberships[username]
        assert member.role == Membership.Role.ANNOTATOR
        assert not member.user.is_staff and not member.user.is_superuser
        assert member.user.is_active


@pytest.mark.django_db
def test_rerun_keeps_annotation_progress_and_restores_missing_pairs(demo_settings):
    run_demo()
    started = Pair.objects.get(external_id="demo-t2i-01")
    started.status = Pair.Status.IN_PROGRESS
    started.save(update_fields=["status"])
    Pair.objects.filter(external_id="demo-edit-03").delete()

    result = demo_seed()

    started.refresh_from_db()
    assert started.status == Pair.Status.IN_PROGRESS
    assert result["pairs"] == {"t2i": 21, "edit": 21, "interleaved": 21, "reasoning": 21}
    assert result["new_pairs"] == {"t2i": 0, "edit": 1, "interleaved": 0, "reasoning": 0}
    assert result["usernames"] == USERNAMES
    assert Pair.objects.get(external_id="demo-edit-03").status == Pair.Status.QUEUED


def test_drawing_is_deterministic(tmp_path):
    """Same records and same image bytes on every run: the importer then sees no change."""
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    first_dir.mkdir()
    second_dir.mkdir()
    for slug in TASKS:
        assert build_records(slug, first_dir, 4) == build_records(slug, second_dir, 4)
    names = sorted(path.name for path in first_dir.iterdir())
    assert names == sorted(path.name for path in second_dir.iterdir())
    for name in names:
        assert (first_dir / name).read_bytes() == (second_dir / name).read_bytes()


def test_records_are_native_pairs_without_labels(tmp_path):
    records = build_records("edit", tmp_path, 3)
    assert [r["id"] for r in records] == ["demo-edit-01", "demo-edit-02", "demo-edit-03"]
    for record in records:
        assert "chosen" not in record and "human_annotations" not in record
        assert [kind for kind, _ in record["prompt_content"]] == ["text", "image"]
        for side in ("response_a", "response_b"):
            assert record[side]["model_name"]
            for kind, value in record[side]["response_content"]:
                assert kind == "image" and (tmp_path / value).is_file()


@pytest.mark.django_db(transaction=True)  # judge runs and the export start on commit
def test_every_lead_page_has_something_to_show_on_first_visit(demo_settings, tasks_in_process):
    run_demo()
    project = Project.objects.get(slug="demo")
    for slug in TASKS:
        statuses = list(
            Pair.objects.filter(task__slug=slug, external_id__regex=r"-10[1-6]$").values_list(
                "status", flat=True
            )
        )
        assert sorted(statuses) == ["dropped"] * 2 + ["kept"] * 4  # a disagreement, a tie
        assert Pair.objects.filter(task__slug=slug, status="candidate").count() == 3
    ratings = Rating.objects.filter(pair__project=project)
    assert set(ratings.values_list("annotator__username", flat=True)) == set(EXPERTS)
    assert ratings.count() == 4 * 6 * 3 and not ratings.filter(imported=True).exists()
    # Two pairwise judges in both orders, one pointwise judge once, on 4 tasks × 6 pairs.
    verdicts = Verdict.objects.filter(pair__project=project)
    assert verdicts.count() == 2 * 4 * 6 * 2 + 4 * 6
    assert verdicts.filter(order="pointwise", score_a__gte=1, score_b__lte=10).count() == 4 * 6
    assert {j.name for j in TaskEnsemble.objects.first().judges.all()} == {"always-a", "coin"}
    assert ExportJob.objects.get().status == "done"
    assert TaskEnsemble.objects.filter(task__project=project).count() == 4
    annotator = get_user_model().objects.get(username="annotator1")
    tasks = list(project.tasks.order_by("slug"))
    for progress in annotator_progress(annotator, tasks, timezone.now()):
        # The queue is full: 10 pairs to rate, and the gold checks the annotator will meet
        # among them (at least one within 10 pairs; the task has two).
        assert progress.done == 0 and 11 <= progress.remaining <= 12, progress
        assert Pair.objects.filter(task=progress.task, status="queued").count() == 10

    # The experts' aspects follow their overall score without copying it.
    aspect_scores = list(
        AspectScore.objects.filter(rating__pair__project=project).values_list(
            "score", "rating__overall"
        )
    )
    differ = sum(score != overall for score, overall in aspect_scores)
    assert 0.2 * len(aspect_scores) < differ < 0.8 * len(aspect_scores)
    assert all(abs(score - overall) <= 2 for score, overall in aspect_scores)

    run_demo()  # a rerun adds no rating, verdict or export
    assert Rating.objects.count() == 72 and ExportJob.objects.count() == 1
    assert Verdict.objects.count() == 120
