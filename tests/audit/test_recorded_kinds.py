"""One test per kind of change the audit trail records: each made through its real page (or
the API, the admin, the sign-in form), then the entry's who, when, from where and what."""

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from audit.models import AuditEntry, AuditKind
from content.models import Pair
from judging.models import Connection, Judge
from projects.models import Invitation, Membership, Task
from tests.api.test_token_page import KEY
from tests.audit.conftest import ADDRESS, assert_by, newest
from tests.factories import image_bytes, member

pytestmark = pytest.mark.django_db

CREATE, UPDATE, DELETE, ACCESS = (AuditEntry.Action.CREATE, AuditEntry.Action.UPDATE,
                                  AuditEntry.Action.DELETE, AuditEntry.Action.ACCESS)  # fmt: skip
SETTINGS = ["name", "scale_points", "annotators_per_pair", "max_span", "ambiguous_half_width",
            "ensemble_threshold", "lease_minutes", "edit_grace_minutes", "target_half_width",
            "judge_labels_alpha", "judge_labels_delta", "guidelines"]  # fmt: skip
OFFLINE_JUDGE = {"name": "coin", "backend": "random", "model": "", "connection": "",
                 "concurrency": 2, "requests_per_minute": "", "timeout_seconds": 5,
                 "sampling": "{}", "templates": "{}", "price_input_per_mtok": "0",
                 "price_output_per_mtok": "0"}  # fmt: skip


def post(client, url, data=None, **extra):
    return client.post(url, data or {}, REMOTE_ADDR=ADDRESS, **extra)


def test_a_project_settings_change_is_recorded_with_its_diff(client, task, lead, since):
    project = task.project
    values = {name: getattr(project, name) for name in SETTINGS}
    answer = post(client, reverse("project-settings", args=[project.slug]),
                  {**values, "lease_minutes": 45})  # fmt: skip
    assert answer.status_code == 302
    entry = newest(AuditKind.PROJECT, UPDATE)
    assert_by(entry, lead, since, project.pk)
    assert entry.changes == {"lease_minutes": ["30", "45"]}


def test_the_consensus_rules_changed_from_the_disagreements_page_are_recorded(
    client, task, lead, since
):
    project = task.project
    url = reverse("dash-filter-settings", args=[project.slug])
    post(client, url, {"max_span": 3, "ambiguous_half_width": 0.5})
    entry = newest(AuditKind.PROJECT, UPDATE)
    assert_by(entry, lead, since, project.pk)
    assert entry.changes == {"max_span": ["4", "3"]}


def test_a_task_settings_change_is_recorded(client, task, lead, since):
    url = reverse("task-edit", args=[task.project.slug, task.slug])
    answer = post(client, url, {"slug": task.slug, "name": "Renamed", "kind": task.kind,
                                "aspects": "", "guidelines": "", "gold_rate": 0.1,
                                "gold_min_accuracy": 0.7, "gold_min_answers": 5,
                                "gold_action": "flag", "qualification_pass": 0.8,
                                "min_active_seconds": 3})  # fmt: skip
    assert answer.status_code == 302, answer.content.decode()[:2000]
    entry = newest(AuditKind.TASK, UPDATE)
    assert_by(entry, lead, since, task.project_id)
    assert entry.changes["name"] == [task.name, "Renamed"]


def test_a_judge_made_and_deleted_from_its_pages_is_recorded(client, task, lead, since):
    project = task.project
    answer = post(client, reverse("judge-new", args=[project.slug]), OFFLINE_JUDGE)
    assert answer.status_code == 302, answer.content.decode()[:2000]
    judge = Judge.objects.get(project=project, name="coin")
    made = newest(AuditKind.JUDGE, CREATE)
    assert_by(made, lead, since, project.pk)
    assert made.object_repr == "coin" and made.changes["backend"] == ["None", "random"]

    post(client, reverse("judge-delete", args=[project.slug, judge.pk]))
    assert not Judge.objects.filter(pk=judge.pk).exists()
    gone = newest(AuditKind.JUDGE, DELETE)
    assert_by(gone, lead, since, project.pk)
    assert gone.object_id == judge.pk and gone.changes["name"] == ["coin", "None"]


def test_a_connection_the_operator_adds_in_the_admin_is_recorded_server_wide(client, task, since):
    operator = User.objects.create_superuser("root", password="pw-root-1")
    client.force_login(operator)
    answer = post(client, "/admin/judging/connection/add/",
                  {"name": "lab", "backend": "openai", "base_url": "http://127.0.0.1:9/v1",
                   "api_key_env": "LAB_KEY", "projects": [task.project_id]})  # fmt: skip
    assert answer.status_code == 302, answer.content.decode()[:3000]
    entry = newest(AuditKind.CONNECTION, CREATE)
    assert_by(entry, operator, since, None)  # the operator's: no project's leads see it
    assert entry.changes["base_url"] == ["None", "http://127.0.0.1:9/v1"]
    allowed = AuditEntry.objects.filter(kind=AuditKind.CONNECTION, action=UPDATE).first()
    assert allowed.changes["projects"]["objects"] == [task.project.name]
    assert Connection.objects.get(name="lab").api_key_env == "LAB_KEY"


def test_a_member_changed_and_removed_is_recorded(client, task, lead, since):
    project = task.project
    annotator = member("ann-1", project)
    membership = Membership.objects.get(user=annotator, project=project)
    post(client, reverse("member-update", args=[project.slug, membership.pk]),
         {"role": "annotator", "tasks": [task.pk]})  # fmt: skip
    covered = newest(AuditKind.MEMBER, UPDATE)
    assert_by(covered, lead, since, project.pk)
    assert covered.changes["tasks"] == {"type": "m2m", "operation": "add",
                                        "objects": [str(task)]}  # fmt: skip

    post(client, reverse("member-deactivate", args=[project.slug, membership.pk]))
    removed = newest(AuditKind.MEMBER, DELETE)
    assert_by(removed, lead, since, project.pk)
    assert removed.object_repr == "ann-1 (annotator)"


def test_an_invitation_made_and_revoked_is_recorded_without_its_token(client, task, lead, since):
    project = task.project
    answer = post(client, reverse("project-members", args=[project.slug]),
                  {"role": "annotator", "days": 7, "email": "", "note": "for Ada"})  # fmt: skip
    assert answer.status_code == 200
    invitation = Invitation.objects.get(project=project)
    made = newest(AuditKind.INVITATION, CREATE)
    assert_by(made, lead, since, project.pk)
    assert made.changes["note"] == ["None", "for Ada"]
    assert "token_hash" not in made.changes
    assert invitation.token_hash not in json.dumps(made.serialized_data or {})

    post(client, reverse("invitation-revoke", args=[project.slug, invitation.pk]))
    revoked = newest(AuditKind.INVITATION, UPDATE)
    assert_by(revoked, lead, since, project.pk)
    assert revoked.changes["revoked_at"][0] == "None" and revoked.changes["revoked_at"][1]


def test_a_gold_answer_set_and_changed_is_recorded(client, task, lead, since):
    project = task.project
    pair = Pair.objects.filter(task=task).order_by("pk").first()
    url = reverse("dash-pair-gold", args=[project.slug, pair.pk])
    post(client, url, {"side": "A", "explanation": "A follows the prompt"})
    made = newest(AuditKind.GOLD, CREATE)
    assert_by(made, lead, since, project.pk)
    assert made.changes["side"] == ["None", "A"]

    post(client, url, {"side": "B", "explanation": "On second look, B"})
    changed = newest(AuditKind.GOLD, UPDATE)
    assert_by(changed, lead, since, project.pk)
    assert changed.changes["side"] == ["A", "B"]


def test_an_adjudication_is_recorded(client, task, lead, since):
    project = task.project
    pair = Pair.objects.filter(task=task).order_by("pk").first()
    post(client, reverse("dash-pair-decide", args=[project.slug, pair.pk]),
         {"decision": "keep_b", "note": "B follows the prompt"})  # fmt: skip
    entry = newest(AuditKind.ADJUDICATION, CREATE)
    assert_by(entry, lead, since, project.pk)
    assert entry.changes["decision"] == ["None", "keep_b"]
    assert entry.object_repr == f"pair {pair.pk}: keep_b"


@pytest.mark.usefixtures("tasks_in_process")
def test_an_import_is_recorded_as_who_started_it_not_its_progress(
    client, task, lead, since, django_capture_on_commit_callbacks
):
    project = task.project
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        record = {
            "id": "x-1",
            "prompt_content": [["text", "Draw"]],
            "response_a": {"model_name": "m1", "response_content": [["image", "a.png"]]},
            "response_b": {"model_name": "m2", "response_content": [["image", "b.png"]]},
        }
        archive.writestr("pairs.jsonl", json.dumps(record) + "\n")
        archive.writestr("a.png", image_bytes(color=(1, 0, 0)))
        archive.writestr("b.png", image_bytes(color=(0, 1, 0)))
    upload = SimpleUploadedFile("mine.zip", buffer.getvalue(), content_type="application/zip")
    with django_capture_on_commit_callbacks(execute=True):
        answer = post(client, reverse("project-data", args=[project.slug]),
                      {"task": task.slug, "new_task": "", "destination": "queue",
                       "file_format": "", "file": upload})  # fmt: skip
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert project.import_jobs.get().status == "done"
    entries = AuditEntry.objects.filter(kind=AuditKind.IMPORT)
    assert list(entries.values_list("action", flat=True)) == [CREATE]  # no worker's progress
    assert_by(entries.get(), lead, since, project.pk)
    assert entries.get().object_repr == "mine.zip"


@pytest.mark.usefixtures("tasks_in_process")
def test_an_export_is_recorded(client, task, lead, since):
    project = task.project
    task.pairs.filter(pk=task.pairs.order_by("pk").last().pk).update(status="kept", label="A")
    answer = post(client, reverse("dash-export-start", args=[project.slug]),
                  {"format": "jsonl", "task": ""})  # fmt: skip
    assert answer.status_code == 302
    entries = AuditEntry.objects.filter(kind=AuditKind.EXPORT)
    assert list(entries.values_list("action", flat=True)) == [CREATE]
    assert_by(entries.get(), lead, since, project.pk)
    assert entries.get().changes["file_format"] == ["None", "jsonl"]


def test_a_task_deleted_from_the_settings_page_is_recorded(client, task, lead, since):
    typo = Task.objects.create(project=task.project, slug="tti", name="tti")
    post(client, reverse("task-delete", args=[task.project.slug, typo.slug]))
    assert not Task.objects.filter(pk=typo.pk).exists()
    entry = newest(AuditKind.TASK, DELETE)
    assert_by(entry, lead, since, task.project_id)
    assert entry.object_repr == "tti" and entry.changes["slug"] == ["tti", "None"]


def test_a_judge_made_through_the_api_names_the_tokens_user(client, task, lead, since):
    from tests.factories import api_key

    client.logout()
    key = api_key(lead)
    answer = client.post("/api/judges/", json.dumps({"project": task.project.slug,
                         "name": "api-coin", "backend": "random"}),
                         content_type="application/json", REMOTE_ADDR=ADDRESS,
                         HTTP_AUTHORIZATION=f"Token {key}")  # fmt: skip
    assert answer.status_code == 201, answer.content.decode()[:2000]
    entry = newest(AuditKind.JUDGE, CREATE)
    assert_by(entry, lead, since, task.project_id)
    assert entry.object_repr == "api-coin"


def test_a_sign_in_is_recorded_with_the_address(client, task, since):
    user = User.objects.create_user("ada", password="pw-right-1")
    client.post(reverse("login"), {"username": "ada", "password": "pw-right-1"},
                REMOTE_ADDR=ADDRESS)  # fmt: skip
    entry = newest(AuditKind.SIGN_IN)
    assert_by(entry, user, since, None)
    assert entry.action == ACCESS and entry.object_repr == "ada"


def test_a_failed_sign_in_is_recorded_with_the_name_tried_and_never_the_password(
    client, task, since
):
    User.objects.create_user("ada", password="pw-right-1")
    answer = client.post(reverse("login"), {"username": "ada", "password": "pw-Wrong-guess-9"},
                         REMOTE_ADDR=ADDRESS)  # fmt: skip
    assert answer.status_code == 200  # the form again
    entry = newest(AuditKind.SIGN_IN_FAILED)
    assert entry.actor_id is None and entry.remote_addr == ADDRESS
    assert entry.object_repr == "ada" and since <= entry.timestamp
    row = AuditEntry.objects.filter(pk=entry.pk).values().get()
    assert "pw-Wrong-guess-9" not in json.dumps(row, default=str)
    assert "pw-right-1" not in json.dumps(row, default=str)


def test_an_api_token_made_used_and_revoked_is_recorded_without_its_key(client, task, lead, since):
    from projects.models import ApiToken

    project = task.project
    fields = {"name": "nightly", "days": 30, "access": "read", "project": project.pk}
    answer = post(client, reverse("api-tokens"), fields)
    assert answer.status_code == 200, answer.content.decode()[:2000]
    token = ApiToken.objects.get(user=lead)
    made = newest(AuditKind.TOKEN, CREATE)
    assert_by(made, lead, since, None)  # the holder's own: the operator's trail only
    assert made.object_repr == f"nightly (boss, {token.prefix}…)"
    assert made.changes["access"] == ["None", "read"]
    row = json.dumps(AuditEntry.objects.filter(pk=made.pk).values().get(), default=str)
    key = KEY.search(answer.content.decode()).group(1)  # shown once, on this page
    assert token.digest not in row and key not in row

    client.logout()  # a script's use writes its last use, which is no change of anyone's
    used = client.get("/api/projects/", HTTP_AUTHORIZATION=f"Token {key}")
    assert used.status_code == 200 and ApiToken.objects.get().last_used_at is not None
    assert AuditEntry.objects.filter(kind=AuditKind.TOKEN).count() == 1

    client.force_login(lead)
    post(client, reverse("api-token-revoke", args=[token.pk]))
    revoked = newest(AuditKind.TOKEN, UPDATE)
    assert_by(revoked, lead, since, None)
    assert list(revoked.changes) == ["revoked_at"] and revoked.changes["revoked_at"][0] == "None"


def test_tokens_revoked_by_a_password_change_are_recorded(client, task, lead, since):
    from projects.services.api_tokens import api_token_create

    for name in ("one", "two"):
        api_token_create(user=lead, name=name)
    lead.set_password("pw-new-secret-7")
    lead.save()  # outside a request: the server revoked them
    revoked = AuditEntry.objects.filter(kind=AuditKind.TOKEN, action=UPDATE)
    assert revoked.count() == 2
    assert {entry.actor_id for entry in revoked} == {None}
    assert all(list(entry.changes) == ["revoked_at"] for entry in revoked)


def test_a_webhook_destination_and_a_subscription_are_recorded_without_the_url(
    client, task, lead, since, monkeypatch
):
    from webhooks.models import Destination

    project = task.project
    monkeypatch.setenv("HOOK_SECRET", "s" * 32)
    operator = User.objects.create_superuser("root", password="pw-root-1")
    client.force_login(operator)
    hook = "https://hooks.example.org/T000/B000/very-secret-path"
    answer = post(client, "/admin/webhooks/destination/add/",
                  {"name": "lab-hook", "url": hook, "secret_env": "HOOK_SECRET",
                   "projects": [project.pk]})  # fmt: skip
    assert answer.status_code == 302, answer.content.decode()[:3000]
    destination = Destination.objects.get(name="lab-hook")
    made = newest(AuditKind.WEBHOOK, CREATE)
    assert_by(made, operator, since, None)  # the operator's: no project's leads see it
    assert made.object_repr == "lab-hook" and made.changes["secret_env"][1] == "HOOK_SECRET"
    allowed = AuditEntry.objects.filter(kind=AuditKind.WEBHOOK, action=UPDATE).first()
    assert allowed.changes["projects"]["objects"] == [project.name]
    every_entry = json.dumps(list(AuditEntry.objects.values()), default=str)
    assert "very-secret-path" not in every_entry

    client.force_login(lead)
    answer = post(client, reverse("project-webhooks", args=[project.slug]),
                  {"destination": destination.pk, "kinds": ["pair.decided"]})  # fmt: skip
    assert answer.status_code == 302, answer.content.decode()[:2000]
    subscribed = newest(AuditKind.WEBHOOK, CREATE)
    assert_by(subscribed, lead, since, project.pk)
    assert subscribed.object_repr == "lab-hook: pair.decided"
