"""The annotator's API: claim → read (blinded) → rate → own ratings, and what refuses."""

from annotation.models import Assignment, Rating
from projects.models import Membership, Task
from projects.scale import to_canonical
from tests.api.conftest import token_client


def claim(client, task):
    response = client.post(f"/api/tasks/{task.pk}/claim/")
    assert response.status_code == 200, response.content
    return response.json()["assignment"]


def test_claim_submit_and_list_own_ratings(world, as_annotator):
    assignment = claim(as_annotator, world.alpha_task)
    assert assignment["status"] == "leased" and assignment["editable"] is True
    assert assignment["lease_expires_at"]
    assert [a["key"] for a in assignment["aspects"]] == ["faithfulness", "quality"]
    assert assignment["scale_points"] == 7 and len(assignment["scale_labels"]) == 7
    assert assignment["scale_labels"][0] == {"value": 1, "label": "Left much better"}
    assert assignment["rating"] is None
    # Claiming again resumes the same pair.
    assert claim(as_annotator, world.alpha_task)["id"] == assignment["id"]

    answer = as_annotator.post(
        f"/api/assignments/{assignment['id']}/rating/",
        {"overall": 2, "aspects": {"quality": 3}, "rationale": "left is sharper"},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["assignment"] == assignment["id"]
    assert body["values"] == {
        "overall": 2,
        "aspects": {"quality": 3},
        "rationale": "left is sharper",
    }

    stored = Rating.objects.get(assignment_id=assignment["id"])
    swapped = Assignment.objects.get(pk=assignment["id"]).swapped
    assert stored.overall == to_canonical(2, 7, swapped)  # Left/Right mapped through `swapped`

    mine = as_annotator.get("/api/ratings/").json()
    assert mine["count"] == 1 and mine["results"][0]["id"] == stored.pk
    assert as_annotator.get(f"/api/ratings/{stored.pk}/").json()["values"]["overall"] == 2

    detail = as_annotator.get(f"/api/assignments/{assignment['id']}/").json()
    assert detail["status"] == "submitted"
    assert detail["rating"]["overall"] == 2
    listed = as_annotator.get("/api/assignments/?status=submitted").json()
    assert [a["id"] for a in listed["results"]] == [assignment["id"]]

    # The next claim is another pair.
    assert claim(as_annotator, world.alpha_task)["id"] != assignment["id"]


def test_left_and_right_follow_swapped(world, as_annotator):
    assignment = claim(as_annotator, world.alpha_task)
    stored = Assignment.objects.select_related("pair__response_a").get(pk=assignment["id"])
    texts = [p["text"] for p in assignment["left"]["content"] if p["type"] == "text"]
    a_text = next(v for k, v in stored.pair.response_a.content if k == "text")
    assert (texts == [a_text]) is (not stored.swapped)
    Assignment.objects.filter(pk=stored.pk).update(swapped=not stored.swapped)
    flipped = as_annotator.get(f"/api/assignments/{stored.pk}/").json()
    assert flipped["right"] == assignment["left"] and flipped["left"] == assignment["right"]


def test_content_is_blinded_and_images_are_served(world, as_annotator):
    assignment = claim(as_annotator, world.alpha_task)
    raw = str(assignment)
    for secret in ("secretmodel", "t2i-", "ann_a2", "lead_a", "baseline-a", "ext-judge"):
        assert secret not in raw
    assert "pair" not in assignment
    image = next(p for p in assignment["left"]["content"] + assignment["right"]["content"]
                 if p["type"] == "image")["image"]  # fmt: skip
    assert image["url"].endswith(f"/api/assets/{image['sha256']}/")
    served = as_annotator.get(f"/api/assets/{image['sha256']}/")
    assert served.status_code == 200
    assert served["Content-Type"] == image["content_type"] == "image/png"
    assert b"".join(served.streaming_content).startswith(b"\x89PNG")
    assert as_annotator.get("/api/assets/" + "0" * 64 + "/").status_code == 404
    assert as_annotator.get("/api/assets/not-a-hash/").status_code == 404


def test_nothing_left_answers_null(world, as_annotator):
    for _ in range(10):
        assignment = claim(as_annotator, world.alpha_task)
        if assignment is None:
            break
        as_annotator.post(
            f"/api/assignments/{assignment['id']}/rating/", {"overall": 4}, format="json"
        )
    assert assignment is None
    assert as_annotator.post(f"/api/tasks/{world.alpha_task.pk}/claim/").json() == {
        "assignment": None
    }


def test_rating_errors_name_their_fields(world, as_annotator):
    assignment = claim(as_annotator, world.alpha_task)
    url = f"/api/assignments/{assignment['id']}/rating/"
    answer = as_annotator.post(url, {"overall": 9, "aspects": {"nope": 2}}, format="json")
    assert answer.status_code == 400
    assert answer.json() == {  # the service's checks, for this task's K = 7 and aspects
        "overall": ["must be from 1 to 7"],
        "aspects": {"nope": ["not an aspect of this task"]},
    }
    answer = as_annotator.post(url, {"overall": 7, "aspects": {"nope": 2}}, format="json")
    assert answer.status_code == 400
    assert answer.json() == {"aspects": {"nope": ["not an aspect of this task"]}}
    answer = as_annotator.post(url, {"aspects": {"quality": 2}}, format="json")
    assert answer.status_code == 400 and "overall" in answer.json()
    assert not Rating.objects.filter(assignment_id=assignment["id"]).exists()


def test_a_skipped_or_closed_assignment_answers_409(world, as_annotator):
    assignment = claim(as_annotator, world.alpha_task)
    skip_url = f"/api/assignments/{assignment['id']}/skip/"
    assert as_annotator.post(skip_url, {}, format="json").status_code == 400  # reason needed
    skipped = as_annotator.post(skip_url, {"reason": "broken image"}, format="json")
    assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
    rated = as_annotator.post(
        f"/api/assignments/{assignment['id']}/rating/", {"overall": 3}, format="json"
    )
    assert rated.status_code == 409
    assert "skipped" in rated.json()["detail"]

    other = claim(as_annotator, world.alpha_task)
    url = f"/api/assignments/{other['id']}/rating/"
    assert as_annotator.post(url, {"overall": 3}, format="json").status_code == 200
    assert as_annotator.post(url, {"overall": 3}, format="json").status_code == 200  # repeat
    again = as_annotator.post(skip_url.replace(str(assignment["id"]), str(other["id"])),
                              {"reason": "changed my mind"}, format="json")  # fmt: skip
    assert again.status_code == 409


def test_the_last_skip_is_undone_once_and_the_pair_comes_back_next(world, as_annotator):
    first = claim(as_annotator, world.alpha_task)
    url = f"/api/assignments/{first['id']}/"
    as_annotator.post(url + "skip/", {"reason": "slipped"}, format="json")
    following = claim(as_annotator, world.alpha_task)
    assert following["id"] != first["id"]

    undone = as_annotator.post(url + "undo/")
    assert undone.status_code == 200, undone.content
    assert undone.json()["status"] == "leased"
    assert claim(as_annotator, world.alpha_task)["id"] == first["id"]  # next again
    again = as_annotator.post(url + "undo/")
    assert again.status_code == 409
    assert again.json() == {"detail": "There is nothing to undo on this pair: it is not skipped."}


def test_membership_limits_the_tasks(world, tmp_path):
    from tests.factories import queued_pairs

    second = queued_pairs(tmp_path, project_slug="alpha", task_slug="edit", count=2)
    membership = Membership.objects.get(user=world.ann_a, project=world.alpha)
    membership.tasks.set([world.alpha_task])
    client = token_client(world.ann_a)
    listed = client.get("/api/tasks/").json()
    assert [task["slug"] for task in listed["results"]] == ["t2i"]
    assert client.get(f"/api/tasks/{second.pk}/").status_code == 404
    assert client.post(f"/api/tasks/{second.pk}/claim/").status_code == 404
    lead = token_client(world.lead_a).get("/api/tasks/?project=alpha").json()
    assert sorted(task["slug"] for task in lead["results"]) == ["edit", "t2i"]
    assert Task.objects.filter(project=world.alpha).count() == 2


def test_a_member_who_left_loses_their_assignments_and_ratings(world, as_annotator):
    assignment = claim(as_annotator, world.alpha_task)
    as_annotator.post(f"/api/assignments/{assignment['id']}/rating/", {"overall": 3},
                      format="json")  # fmt: skip
    Membership.objects.filter(user=world.ann_a).delete()
    assert as_annotator.get(f"/api/assignments/{assignment['id']}/").status_code == 404
    assert as_annotator.get("/api/ratings/").json()["count"] == 0
    assert as_annotator.get("/api/projects/").json()["count"] == 0
