"""Judges (global, leads only), runs and verdicts (the leads of their projects)."""

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from judging.models import Judge, JudgeRun, JudgeRunChunk, Verdict


def test_judges_crud(world, as_lead):
    listed = as_lead.get("/api/judges/").json()
    assert [j["name"] for j in listed["results"]] == ["baseline-a", "ext-judge", "judge-unused"]
    created = as_lead.post(
        "/api/judges/",
        {"name": "gpt-x", "backend": "openai", "model": "gpt-x", "base_url": "http://127.0.0.1:9/v1",
         "api_key_env": "OPENAI_KEY", "sampling": {"temperature": 0}, "concurrency": 2,
         "price_input_per_mtok": "1.25"},
        format="json",
    )  # fmt: skip
    assert created.status_code == 201, created.content
    judge = created.json()
    assert judge["api_key_env"] == "OPENAI_KEY" and judge["price_input_per_mtok"] == "1.2500"
    changed = as_lead.patch(f"/api/judges/{judge['id']}/", {"concurrency": 9}, format="json")
    assert changed.status_code == 200 and changed.json()["concurrency"] == 9
    assert Judge.objects.get(name="gpt-x").model == "gpt-x"  # untouched fields stay
    assert as_lead.get(f"/api/judges/{judge['id']}/").json()["concurrency"] == 9
    assert as_lead.delete(f"/api/judges/{judge['id']}/").status_code == 204
    assert not Judge.objects.filter(name="gpt-x").exists()


def test_judge_validation(world, as_lead):
    duplicate = as_lead.post("/api/judges/", {"name": "baseline-a", "backend": "always-a"})
    assert duplicate.status_code == 400 and "name" in duplicate.json()
    key = as_lead.post(
        "/api/judges/", {"name": "k", "backend": "openai", "api_key_env": "sk-abc123!"}
    )
    assert key.status_code == 400 and "api_key_env" in key.json()
    external = as_lead.post("/api/judges/", {"name": "e", "backend": "external"})
    assert external.status_code == 400 and "backend" in external.json()
    judge_id = world.judge.pk
    rename = as_lead.patch(f"/api/judges/{judge_id}/", {"name": "other"}, format="json")
    assert rename.status_code == 400 and "name" in rename.json()
    bad_url = as_lead.patch(f"/api/judges/{judge_id}/", {"base_url": "ftp:/x"}, format="json")
    assert bad_url.status_code == 400 and "base_url" in bad_url.json()


def test_a_judge_with_results_cannot_be_deleted(world, as_lead):
    answer = as_lead.delete(f"/api/judges/{world.judge.pk}/")
    assert answer.status_code == 409 and "stays" in answer.json()["detail"]
    assert Judge.objects.filter(pk=world.judge.pk).exists()


def test_only_leads_manage_judges(world, as_annotator):
    assert as_annotator.get("/api/judges/").status_code == 403
    assert as_annotator.get(f"/api/judges/{world.judge.pk}/").status_code == 403
    assert (
        as_annotator.post("/api/judges/", {"name": "x", "backend": "always-a"}).status_code == 403
    )
    assert as_annotator.delete(f"/api/judges/{world.judge.pk}/").status_code == 403
    assert not Judge.objects.filter(name="x").exists()


def test_start_watch_cancel_and_resume_a_run(world, as_lead, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        answer = as_lead.post(
            "/api/runs/",
            {"project": "alpha", "judge": world.judge.pk, "task": "t2i", "samples": 2},
            format="json",
        )
    assert answer.status_code == 201, answer.content
    run = answer.json()
    assert run["status"] == "pending" and run["task_slug"] == "t2i"
    assert run["trials"] == 6 * 2 * 2 and run["progress"]["remaining"] == 24
    assert JudgeRunChunk.objects.filter(run_id=run["id"]).exists()
    assert callbacks  # the chunks start in the background once the request commits
    progress = as_lead.get(f"/api/runs/{run['id']}/progress/").json()
    assert progress["status"] == "pending" and progress["percent"] == 0

    cancelled = as_lead.post(f"/api/runs/{run['id']}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert as_lead.post(f"/api/runs/{run['id']}/cancel/").status_code == 409
    resumed = as_lead.post(f"/api/runs/{run['id']}/resume/")
    assert resumed.status_code == 200 and resumed.json()["status"] == "running"

    imported = JudgeRun.objects.get(project=world.alpha, purpose="import")
    finished = as_lead.get(f"/api/runs/{imported.pk}/").json()
    assert finished["progress"]["done"] == 12 and finished["progress"]["percent"] == 100
    assert as_lead.post(f"/api/runs/{imported.pk}/resume/").status_code == 409
    assert as_lead.post(f"/api/runs/{imported.pk}/cancel/").status_code == 409

    listed = as_lead.get(f"/api/runs/?project=alpha&judge={world.judge.pk}").json()
    assert {r["id"] for r in listed["results"]} == {run["id"], world.run_a.pk}
    assert as_lead.get("/api/runs/?purpose=import").json()["count"] == 1


def test_a_run_that_cannot_start_is_a_400(world, as_lead):
    external = Judge.objects.get(name="ext-judge")
    answer = as_lead.post("/api/runs/", {"project": "alpha", "judge": external.pk}, format="json")
    assert answer.status_code == 400 and "external" in answer.json()["detail"]
    no_task = as_lead.post(
        "/api/runs/", {"project": "alpha", "judge": world.judge.pk, "task": "edit"}, format="json"
    )
    assert no_task.status_code == 400 and "task" in no_task.json()
    samples = as_lead.post(
        "/api/runs/", {"project": "alpha", "judge": world.judge.pk, "samples": 51}, format="json"
    )
    assert samples.status_code == 400 and "samples" in samples.json()
    unknown = as_lead.post("/api/runs/", {"project": "alpha", "judge": 999}, format="json")
    assert unknown.status_code == 404
    assert JudgeRun.objects.filter(project=world.alpha).count() == 2


def test_verdicts_list_filters_and_detail(world, as_lead):
    listed = as_lead.get("/api/verdicts/").json()
    assert listed["count"] == 12
    assert {v["pair_external_id"][:4] for v in listed["results"]} == {"t2i-"}
    pair = listed["results"][0]["pair"]
    by_pair = as_lead.get(f"/api/verdicts/?pair={pair}&task=t2i&project=alpha").json()
    assert by_pair["count"] == 2 and {v["order"] for v in by_pair["results"]} == {
        "forward",
        "reverse",
    }
    assert as_lead.get(f"/api/verdicts/?judge={world.judge.pk}").json()["count"] == 0
    one = as_lead.get(f"/api/verdicts/{listed['results'][0]['id']}/").json()
    assert json.loads(one["raw_output"]) == {"judgement": "A"}
    assert as_lead.get("/api/verdicts/?pair=abc").status_code == 400


def test_import_predictions(world, as_lead):
    ids = list(world.alpha_task.pairs.values_list("external_id", flat=True))
    predictions = {pair_id: {"forward": [{"judgement": "B"}], "reverse": []} for pair_id in ids}
    upload = SimpleUploadedFile("preds.json", json.dumps(predictions).encode())
    answer = as_lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "remote-judge", "file": upload},
        format="multipart",
    )
    assert answer.status_code == 201, answer.content
    summary = answer.json()
    assert summary["verdicts"] == 6 and summary["choices"]["B"] == 6
    assert Verdict.objects.filter(judge__name="remote-judge").count() == 6
    run = JudgeRun.objects.get(judge__name="remote-judge")
    assert run.source == "preds.json"


def test_a_bad_prediction_file_is_a_400(world, as_lead, as_annotator):
    for content, needle in ((b"{not json", "not valid JSON"), (b'{"ghost": {}}', "ghost")):
        upload = SimpleUploadedFile("preds.json", content)
        answer = as_lead.post(
            "/api/verdicts/import/",
            {"project": "alpha", "task": "t2i", "judge": "remote-judge", "file": upload},
            format="multipart",
        )
        assert answer.status_code == 400 and needle in answer.json()["detail"]
    upload = SimpleUploadedFile("preds.json", b"{}")
    refused = as_annotator.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "remote-judge", "file": upload},
        format="multipart",
    )
    assert refused.status_code == 404
    assert not Judge.objects.filter(name="remote-judge").exists()
