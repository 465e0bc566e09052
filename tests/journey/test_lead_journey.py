"""The whole life of a project in Chromium, with a fresh database. The operator's one shell
step is `user_add --lead`; from then on everything happens in pages: the lead creates a
project and a task, uploads a zip of pairs with images, queues them, invites three
annotators who accept and rate every pair, reviews one disagreement, sees the agreement page
and downloads the export, whose rows match what was rated."""

import io
import json
import re
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from annotation.models import Rating
from annotation.services import assignments as assignment_services
from content.models import Pair
from tests.conftest import watch_errors
from tests.factories import image_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WAIT_MS = 30_000  # generous: the suite runs on every core at once
LEAD_PASSWORD = "journey-lead-pw-1"
PASSWORD = "journey-annotator-pw-1"
PAIRS = 3
# Form keys each annotator presses on pairs 1..3 as the queue serves them (nobody sees B on the
# left, so 7 = B much better for everyone): the third annotator disagrees on the first only.
PRESSES = {"ann1": "777", "ann2": "766", "ann3": "177"}


def pairs_zip(path) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        lines = []
        for i in range(PAIRS):
            archive.writestr(f"images/a{i}.png", image_bytes(color=(200, 20 * i, 0)))
            archive.writestr(f"images/b{i}.png", image_bytes(color=(0, 20 * i, 200)))
            lines.append(
                json.dumps(
                    {
                        "id": f"pair-{i}",
                        "prompt_content": [["text", f"A red square, number {i}"]],
                        "response_a": {
                            "model_name": "gen-a",
                            "response_content": [["image", f"images/a{i}.png"]],
                        },
                        "response_b": {
                            "model_name": "gen-b",
                            "response_content": [["image", f"images/b{i}.png"]],
                        },
                    }
                )
            )
        archive.writestr("pairs.jsonl", "\n".join(lines) + "\n")
    return str(path)


def press_until_checked(page, key: str) -> None:
    """Press a score key until the overall row shows it (a key pressed while the page is still
    wiring its handlers under heavy load is otherwise lost)."""
    checked = f"#rating-form input[name=overall][value='{key}']:checked"
    for _attempt in range(5):
        page.keyboard.press(key)
        try:
            page.wait_for_selector(checked, timeout=2_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"key {key} never set the overall score")


def log_in(page, base, username, password):
    page.goto(base + reverse("login"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(base + "/", timeout=WAIT_MS)


def test_a_project_from_nothing_to_a_downloaded_dataset(
    live_server, chromium_browser, tmp_path, monkeypatch, tasks_in_process
):
    monkeypatch.setattr(assignment_services, "_balanced_side", lambda counts: False)
    call_command("user_add", "boss", "--lead", "--password", LEAD_PASSWORD, stdout=io.StringIO())
    base = live_server.url
    lead = watch_errors(chromium_browser.new_page(accept_downloads=True))
    log_in(lead, base, "boss", LEAD_PASSWORD)

    # 1. A project and its task.
    lead.click("text=New project")
    lead.fill("input[name=slug]", "journey")
    lead.fill("input[name=name]", "Journey benchmark")
    lead.click("text=Create the project")
    lead.wait_for_url(re.compile(r"/settings/tasks/new/$"), timeout=WAIT_MS)
    lead.fill("input[name=slug]", "t2i")
    lead.fill("input[name=name]", "Text to image")
    lead.select_option("select[name=kind]", "t2i")
    lead.click("text=Save the task")
    lead.wait_for_url(re.compile(r"/projects/journey/settings/$"), timeout=WAIT_MS)

    # 2. Data: a zip with images, straight to annotation.
    lead.goto(base + reverse("project-data", args=["journey"]))
    lead.select_option("select[name=task]", "t2i")  # the task made above, from the list
    lead.set_input_files("input[name=file]", pairs_zip(tmp_path / "pairs.zip"))
    lead.check("input[name=destination][value=queue]")
    lead.click("text=Upload and import")
    lead.wait_for_selector(f"text={PAIRS} records: {PAIRS} new pairs", timeout=WAIT_MS)
    assert Pair.objects.filter(status="queued").count() == PAIRS

    # 3. Three invitations.
    links = []
    for name in PRESSES:
        lead.goto(base + reverse("project-members", args=["journey"]))
        lead.fill("input[name=note]", f"for {name}")
        lead.click("text=Create the invitation link")
        links.append(lead.input_value("#invitation-link"))

    # 4. Each annotator accepts and rates every pair with the keyboard.
    for (name, presses), link in zip(PRESSES.items(), links, strict=True):
        context = chromium_browser.new_context()
        page = watch_errors(context.new_page())
        page.goto(link)
        page.fill("input[name=username]", name)
        page.fill("input[name=password1]", PASSWORD)
        page.fill("input[name=password2]", PASSWORD)
        page.click("text=Create my account and join")
        page.wait_for_url(base + "/", timeout=WAIT_MS)
        page.get_by_role("button", name="Start").click()
        for number, key in enumerate(presses, start=1):
            page.wait_for_selector(
                f"#workspace .progress >> text=Pair {number} of", timeout=WAIT_MS
            )
            press_until_checked(page, key)
            page.keyboard.press("Enter")
        page.wait_for_function("() => !document.getElementById('rating-form')", timeout=WAIT_MS)
        assert Rating.objects.filter(annotator__username=name).count() == PAIRS
        assert page.console_errors == [], name
        context.close()

    # 5. The disagreement, on the pair served first (by draw): reviewed and decided by the lead.
    disputed = Pair.objects.order_by("draw").first()
    assert disputed.status == "dropped" and disputed.consensus_span == 6
    lead.goto(base + reverse("dash-disagreements", args=["journey"]))
    lead.click(f"text={disputed.external_id}")
    lead.wait_for_url(re.compile(rf"/pairs/{disputed.pk}/"), timeout=WAIT_MS)
    assert "pressed 1 = Left much better" in lead.inner_text("main")
    lead.select_option("select[name=decision]", "keep_b")
    lead.fill("textarea[name=note]", "B is the red square; ann3 slipped")
    lead.click("text=Record the decision")
    lead.wait_for_selector("text=Decision recorded", timeout=WAIT_MS)
    disputed.refresh_from_db()
    assert (disputed.status, disputed.label, disputed.decided_by) == ("kept", "B", "adjudication")

    # 6. Agreement, then the export.
    lead.goto(base + reverse("dash-agreement", args=["journey"]))
    assert "Text to image" in lead.inner_text("main")
    lead.goto(base + reverse("dash-overview", args=["journey"]))
    lead.click("text=Start export")
    lead.wait_for_selector("text=Download .zip", timeout=WAIT_MS)
    with lead.expect_download() as download:
        lead.click("text=Download .zip")
    archive = zipfile.ZipFile(download.value.path())
    rows = [json.loads(line) for line in archive.read("t2i.jsonl").decode().splitlines()]
    assert sorted(row["id"] for row in rows) == [f"pair-{i}" for i in range(PAIRS)]
    for row in rows:
        pair = Pair.objects.get(external_id=row["id"])
        stored = sorted(Rating.objects.filter(pair=pair).values_list("overall", flat=True))
        assert sorted(row["human_annotations"]) == stored and len(stored) == 3
        assert row["chosen"] == "B"
    assert lead.console_errors == []
