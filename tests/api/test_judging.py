"""Judges (a project's, and the operator's run-only ones), runs and verdicts (the leads of
their projects)."""

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from content.models import Pair
from judging.models import Judge, JudgeRun, JudgeRunChunk, Verdict
from judging.services.judges import connection_save


def test_judges_crud(world, as_lead):
    connection_save(
        "openai-main", backend="openai", base_url="http://127.0.0.1:9/v1",
        api_key_env="OPENAI_KEY", projects=[world.alpha],
    )  # fmt: skip
    listed = as_lead.get("/api/judges/").json()
    assert [j["name"] for j in listed["results"]] == ["baseline-a", "ext-judge", "judge-unused"]
    assert [j["project"] for j in listed["results"]] == [None, world.alpha.pk, world.alpha.pk]
    assert as_lead.get("/api/projects/alpha/connections/").json() == [
        {"name": "openai-main", "backend": "openai"}
    ]
    created = as_lead.post(
        "/api/judges/",
        {"name": "gpt-x", "project": "alpha", "backend": "openai", "connection": "openai-main",
         "model": "gpt-x", "sampling": {"temperature": 0}, "concurrency": 2,
         "price_input_per_mtok": "1.25"},
        format="json",
    )  # fmt: skip
    assert created.status_code == 201, created.content
    judge = created.json()
    assert (judge["project"], judge["connection"]) == (world.alpha.pk, "openai-main")
    assert judge["price_input_per_mtok"] == "1.2500"
    assert (
        "OPENAI_KEY" not in created.content.decode() and "127.0.0.1" not in created.content.decode()
    )
    changed = as_lead.patch(f"/api/judges/{judge['id']}/", {"concurrency": 9}, format="json")
    assert changed.status_code == 200 and changed.json()["concurrency"] == 9
    assert Judge.objects.get(name="gpt-x").model == "gpt-x"  # untouched fields stay
    assert as_lead.get(f"/api/judges/{judge['id']}/").json()["concurrency"] == 9
    assert as_lead.delete(f"/api/judges/{judge['id']}/").status_code == 204
    assert not Judge.objects.filter(name="gpt-x").exists()


def test_judge_validation(world, as_lead):
    alpha = {"project": "alpha"}
    duplicate = as_lead.post("/api/judges/", {**alpha, "name": "baseline-a", "backend": "always-a"})
    assert duplicate.status_code == 400 and "name" in duplicate.json()
    external = as_lead.post("/api/judges/", {**alpha, "name": "e", "backend": "external"})
    assert external.status_code == 400 and "backend" in external.json()
    other = as_lead.post("/api/judges/", {"project": "beta", "name": "b", "backend": "random"})
    assert other.status_code == 404  # a project they do not lead: like a missing one
    judge_id = Judge.objects.get(name="judge-unused").pk
    rename = as_lead.patch(f"/api/judges/{judge_id}/", {"name": "other"}, format="json")
    assert rename.status_code == 400 and "name" in rename.json()
    move = as_lead.patch(f"/api/judges/{judge_id}/", {"project": "beta"}, format="json")
    assert move.status_code == 400 and "project" in move.json()


def test_leads_cannot_type_a_url_or_a_variable_name(world, as_lead):
    """Attacks 1 and 3: a judge took any base URL and the name of any server variable, and
    the variable's value was sent to that URL."""
    connection_save(
        "beta-only", backend="openai", base_url="http://127.0.0.1:9/v1", projects=[world.beta]
    )
    for body in (
        {"base_url": "http://127.0.0.1:6379/?"},
        {"api_key_env": "SECRET_KEY"},
        {"connection": "beta-only"},  # exists, but not for alpha
        {"connection": "nowhere"},
    ):
        answer = as_lead.post(
            "/api/judges/",
            {"project": "alpha", "name": "evil", "backend": "openai", "model": "m", **body},
            format="json",
        )
        assert answer.status_code == 400, body
        assert "beta-only" not in answer.content.decode()
    assert not Judge.objects.filter(name="evil").exists()


def test_the_operators_judge_is_run_only_and_a_judge_with_results_stays(world, as_lead):
    shared = as_lead.patch(f"/api/judges/{world.judge.pk}/", {"concurrency": 1}, format="json")
    assert shared.status_code == 403
    assert as_lead.delete(f"/api/judges/{world.judge.pk}/").status_code == 403
    external = Judge.objects.get(name="ext-judge", project=world.alpha)
    answer = as_lead.delete(f"/api/judges/{external.pk}/")
    assert answer.status_code == 409 and "stays" in answer.json()["detail"]
    assert Judge.objects.filter(pk__in=[world.judge.pk, external.pk]).count() == 2


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
    external = Judge.objects.get(name="ext-judge", project=world.alpha)
    answer = as_lead.post("/api/runs/", {"project": "alpha", "judge": external.pk}, format="json")
    assert answer.status_code == 400 and "external" in answer.json()["detail"]
    no_task = as_lead.post(
        "/api/runs/", {"project": "alpha", "judge": world.judge.pk, "task": "edit"}, format="json"
    )
    assert no_task.status_code == 400 and "task" in no_task.json()
    samples = as_lead.post(
        "/api/runs/", {"project": "alpha", "judge": world.judge.pk, "samples": 21}, format="json"
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


def test_templates_are_versioned_per_project(world, as_lead):
    listed = as_lead.get("/api/templates/").json()
    assert [(t["name"], t["version"]) for t in listed["results"]] == [("house", 1)]
    assert "beta:" not in str(listed)
    body = {"project": "alpha", "name": "mmrb2-t2i", "answer_format": "json",
            "body": "Strict. {prompt} {first} {second}"}  # fmt: skip
    first = as_lead.post("/api/templates/", body, format="json")
    assert first.status_code == 201 and first.json()["version"] == 1  # the project's copy
    again = as_lead.post("/api/templates/", body, format="json")
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    bad = as_lead.post("/api/templates/", {**body, "body": "no markers"}, format="json")
    assert bad.status_code == 400 and "body" in bad.json()
    named = as_lead.get("/api/templates/?name=mmrb2-t2i").json()["results"]
    assert [t["project"] for t in named] == [world.alpha.pk]


def test_mjbench_scores_and_strict_reading_through_the_api(world, as_lead):
    pair = world.alpha_task.pairs.order_by("id").first()
    Pair.objects.filter(pk=pair.pk).update(
        metadata={"origin": {"format": "mjbench", "image_0": "x.png", "image_1": "y.png",
                             "row": 0}}
    )  # fmt: skip
    rows = [{"id": 0, "image_0_path": "y.png", "image_1_path": "x.png", "score_0": 0.2,
             "score_1": 0.7}]  # fmt: skip
    upload = SimpleUploadedFile("human0.0.json", json.dumps(rows).encode())
    answer = as_lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "clip", "file": upload,
         "format": "mjbench-scores"},
        format="multipart",
    )  # fmt: skip
    assert answer.status_code == 201, answer.content
    assert answer.json()["choices"]["A"] == 1  # the names the other way round: scores swap
    verdict = Verdict.objects.get(judge__name="clip")
    assert (verdict.pair_id, verdict.score_a, verdict.score_b) == (pair.pk, 0.7, 0.2)
    upload = SimpleUploadedFile("preds.json", json.dumps({"ghost": {}}).encode())
    strict = as_lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "s", "file": upload, "strict_mmrb2": True},
        format="multipart",
    )  # fmt: skip
    assert strict.status_code == 201 and strict.json()["skipped_unknown_ids"] == 1
    upload = SimpleUploadedFile("preds.json", b"{}")
    refused = as_lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "s", "file": upload,
         "format": "mjbench-scores", "strict_mmrb2": True},
        format="multipart",
    )  # fmt: skip
    assert refused.status_code == 400 and "strict_mmrb2" in refused.json()
