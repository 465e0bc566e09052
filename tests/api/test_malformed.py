"""Malformed input is a 400 naming the fields, never a 500: wrong JSON types, huge numbers,
strings where numbers belong, broken JSON, ids out of any column's range."""

import pytest

from annotation.models import Rating
from judging.models import Judge, JudgeRun

HUGE = 10**40


@pytest.fixture
def assignment_url(world, as_annotator):
    claimed = as_annotator.post(f"/api/tasks/{world.alpha_task.pk}/claim/").json()
    return f"/api/assignments/{claimed['assignment']['id']}/rating/"


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"overall": "abc"}, {"overall"}),
        ({"overall": HUGE}, {"overall"}),
        ({"overall": -3}, {"overall"}),
        ({"overall": 2.5}, {"overall"}),
        ({"overall": [4]}, {"overall"}),
        ({"overall": None}, {"overall"}),
        ({"overall": 4, "aspects": "quality"}, {"aspects"}),
        ({"overall": 4, "aspects": [1, 2]}, {"aspects"}),
        ({"overall": 4, "aspects": {"quality": "high"}}, {"aspects"}),
        ({"overall": 4, "aspects": {"quality": HUGE}}, {"aspects"}),
        ({"overall": 4, "active_seconds": "long"}, {"active_seconds"}),
        ({"overall": 4, "active_seconds": 1e300}, {"active_seconds"}),
        ({"overall": 4, "rationale": {"text": "x"}}, {"rationale"}),
        ({"overall": 4, "rationale": "x" * 10_001}, {"rationale"}),
        ({"overall": "4", "aspects": {"nope": "1"}}, {"aspects"}),
    ],
)
def test_rating_bodies(world, as_annotator, assignment_url, body, fields):
    answer = as_annotator.post(assignment_url, body, format="json")
    assert answer.status_code == 400, answer.content
    assert set(answer.json()) == fields
    assert not Rating.objects.filter(annotator=world.ann_a).exists()


@pytest.mark.parametrize(
    ("content", "key"),
    [
        (b"[1, 2]", "detail"),
        (b'"overall"', "detail"),
        (b"{not json", "detail"),
        (b'{"overall": NaN}', "detail"),
        (b"", "overall"),
    ],
)
def test_rating_bodies_that_are_not_objects(world, as_annotator, assignment_url, content, key):
    answer = as_annotator.generic("POST", assignment_url, content, "application/json")
    assert answer.status_code == 400
    assert key in answer.json()


def test_a_body_in_an_unknown_media_type_is_a_415(world, as_annotator, assignment_url):
    answer = as_annotator.generic("POST", assignment_url, b"overall=4", "text/csv")
    assert answer.status_code == 415


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"name": "j", "backend": "always-a", "concurrency": "many"}, {"concurrency"}),
        ({"name": "j", "backend": "always-a", "concurrency": HUGE}, {"concurrency"}),
        ({"name": "j", "backend": "always-a", "requests_per_minute": 0}, {"requests_per_minute"}),
        ({"name": "j", "backend": "always-a", "timeout_seconds": 1e308}, {"timeout_seconds"}),
        ({"name": "j", "backend": "always-a", "timeout_seconds": "soon"}, {"timeout_seconds"}),
        ({"name": "j", "backend": "always-a", "price_input_per_mtok": HUGE},
         {"price_input_per_mtok"}),
        ({"name": "j", "backend": "always-a", "price_output_per_mtok": "1e400"},
         {"price_output_per_mtok"}),
        ({"name": "j", "backend": "always-a", "sampling": [1]}, {"sampling"}),
        ({"name": "j", "backend": "always-a", "templates": {"t2i": {"x": 1}}}, {"templates"}),
        ({"name": "j" * 101, "backend": "always-a"}, {"name"}),
        ({"name": 5, "backend": 7}, {"backend"}),
        ({"name": "j\x00", "backend": "always-a"}, {"name"}),
        ({"backend": "always-a"}, {"name"}),
    ],
)  # fmt: skip
def test_judge_bodies(world, as_lead, body, fields):
    answer = as_lead.post("/api/judges/", {"project": "alpha", **body}, format="json")
    assert answer.status_code == 400, answer.content
    assert set(answer.json()) == fields
    assert Judge.objects.count() == 4  # the world's judges, none added


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"project": "alpha", "judge": "abc"}, {"judge"}),
        ({"project": "alpha", "judge": HUGE}, {"judge"}),
        ({"project": "alpha", "judge": 1, "samples": "x"}, {"samples"}),
        ({"project": "alpha", "judge": 1, "samples": HUGE}, {"samples"}),
        ({"project": "alpha", "judge": 1, "task": "../../etc"}, {"task"}),
        ({"project": ["alpha"], "judge": 1}, {"project"}),
        ({"judge": 1}, {"project"}),
    ],
)
def test_run_bodies(world, as_lead, body, fields):
    answer = as_lead.post("/api/runs/", body, format="json")
    assert answer.status_code == 400, answer.content
    assert set(answer.json()) == fields
    assert JudgeRun.objects.count() == 4


@pytest.mark.parametrize(
    "query",
    [
        "judge=abc",
        f"judge={HUGE}",
        "pair=-1",
        "pair=1.5",
        "task=%00",
        "project=" + "x" * 65,
    ],
)
def test_filters(world, as_lead, query):
    answer = as_lead.get(f"/api/verdicts/?{query}")
    assert answer.status_code == 400
    assert set(answer.json()) == {query.split("=")[0]}


@pytest.mark.parametrize("pk", ["abc", "-1", "0", str(HUGE), "1.5", "%20", "1e3"])
def test_ids_out_of_range_are_plain_404s(world, as_lead, as_annotator, pk):
    for client, url in (
        (as_lead, f"/api/pairs/{pk}/"),
        (as_lead, f"/api/runs/{pk}/progress/"),
        (as_lead, f"/api/verdicts/{pk}/"),
        (as_lead, f"/api/judges/{pk}/"),
        (as_lead, f"/api/projects/{pk}/report/"),
        (as_annotator, f"/api/tasks/{pk}/"),
        (as_annotator, f"/api/assignments/{pk}/"),
        (as_annotator, f"/api/ratings/{pk}/"),
    ):
        answer = client.get(url)
        assert answer.status_code == 404, (url, answer.content)
        assert answer.json() == {"detail": "Not found."} or "no such" in answer.json()["detail"]
    assert as_annotator.post(f"/api/assignments/{pk}/rating/", {"overall": 4}).status_code == 404


def test_a_rating_on_a_pair_decided_meanwhile_is_a_409(world, as_annotator, assignment_url):
    from content.models import Pair

    assignment_id = int(assignment_url.split("/")[3])
    Pair.objects.filter(assignments__pk=assignment_id).update(status=Pair.Status.KEPT)
    answer = as_annotator.post(assignment_url, {"overall": 4}, format="json")
    assert answer.status_code == 409
    assert answer.json() == {"detail": "This pair is no longer being annotated."}


@pytest.mark.parametrize(
    "raw",
    [
        rb'{"project": "alpha", "name": "j", "backend": "always-a", "sampling": {"seed\u0000": 1}}',
        rb'{"project": "alpha", "name": "j", "backend": "random", "sampling": {"s": ["\ud800"]}}',
        rb'{"project": "alpha", "name": "j", "backend": "random", "templates": {"t2i\u0000": "x"}}',
    ],
)
def test_json_settings_the_database_cannot_store(world, as_lead, raw):
    answer = as_lead.generic("POST", "/api/judges/", raw, "application/json")
    assert answer.status_code == 400
    assert set(answer.json()) <= {"sampling", "templates"}
    assert Judge.objects.count() == 4  # the world's judges, none added


@pytest.mark.parametrize("ref", ["al%00pha", "al pha", "%F0%9F%92%A9", "x" * 300, "a.b"])
def test_project_refs_that_are_no_slug_name_nothing(world, as_lead, ref):
    assert as_lead.get(f"/api/projects/{ref}/").status_code == 404
    assert as_lead.get(f"/api/projects/{ref}/report/").status_code == 404
    listed = as_lead.get(f"/api/pairs/?project={ref[:64]}")
    assert listed.status_code in (200, 400)
    if listed.status_code == 200:
        assert listed.json()["count"] == 0


@pytest.mark.parametrize(
    "raw",
    [
        rb'{"overall": 4, "aspects": {"\ud800": 1}}',
        rb'{"overall": 4, "aspects": {"quality": "\udfff"}}',
        rb'{"overall": "\ud800"}',
    ],
)
def test_lone_surrogates_echoed_in_errors_are_escaped(world, as_annotator, assignment_url, raw):
    answer = as_annotator.generic("POST", assignment_url, raw, "application/json")
    assert answer.status_code == 400
    assert answer.content.isascii() or b"\\ud" in answer.content


def test_an_invalid_choice_with_a_lone_surrogate_is_a_400(world, as_lead):
    raw = rb'{"project": "alpha", "name": "j", "backend": "\ud800"}'
    answer = as_lead.generic("POST", "/api/judges/", raw, "application/json")
    assert answer.status_code == 400 and "backend" in answer.json()


def test_imports_of_text_the_database_cannot_store_are_400s(world, as_lead):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from content.models import Pair
    from judging.models import Verdict

    pair_id = world.alpha_task.pairs.first().external_id
    note = '{"judgement": "A", "note": "\\ud800"}'  # valid JSON, a lone surrogate once read
    predictions = f'{{"{pair_id}": {{"forward": [{note}]}}}}'
    pairs = (
        '{"id": "s1", "prompt_source": "u", "response_a": {"model_name": "m\\ud800", '
        '"response_content": [["text", "a"]]}, "response_b": {"model_name": "n", '
        '"response_content": [["text", "b"]]}}\n'
    )
    verdicts_before = Verdict.objects.count()
    for url, name, content, fields in (
        ("/api/verdicts/import/", "p.json", predictions, {"judge": "zz"}),
        ("/api/pairs/import/", "p.jsonl", pairs, {}),
    ):
        upload = SimpleUploadedFile(name, content.encode())
        body = {"project": "alpha", "task": "t2i", "file": upload, **fields}
        answer = as_lead.post(url, body, format="multipart")
        assert answer.status_code == 400
        assert "record 1" in answer.json()["detail"]
        assert "unpaired surrogate" in answer.json()["detail"]
    assert Verdict.objects.count() == verdicts_before
    assert not Pair.objects.filter(external_id="s1").exists()
