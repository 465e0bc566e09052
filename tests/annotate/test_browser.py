"""The annotate page in a real browser: keyboard rating with htmx swaps, the no-JavaScript
path, image zoom, the shortcuts dialog and skipping. Debian's Chromium through Playwright."""

import itertools
import re
import time

import pytest
from django.urls import reverse

from annotation.models import AspectScore, Assignment, Rating
from annotation.services import assignments as assignment_services
from content.models import Asset
from projects.scale import to_canonical
from tests.conftest import watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-annotate-1"
ANNOTATE_URL = re.compile(r"/annotate/(\d+)/$")
WAIT_MS = 15_000  # a live server and Chromium sharing two loaded cores


def log_in_and_start(page, base_url: str, username: str = "expert") -> int:
    """Log in through the form (Enter in the password field), press Start on the home page;
    the id of the assignment shown."""
    page.goto(f"{base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(f"{base_url}/", timeout=WAIT_MS)
    page.get_by_role("button", name="Start").click()
    page.wait_for_url(ANNOTATE_URL, timeout=WAIT_MS)
    return shown_assignment(page)


def shown_assignment(page) -> int:
    return int(page.get_attribute("#workspace", "data-assignment"))


def wait_for_next_pair(page, previous: int, timeout: int = WAIT_MS) -> int:
    page.wait_for_function(
        """previous => {
            const ws = document.getElementById("workspace");
            return ws && ws.dataset.assignment && ws.dataset.assignment !== String(previous);
        }""",
        arg=previous,
        timeout=timeout,
    )
    return shown_assignment(page)


def path_of(url: str) -> str:
    return re.sub(r"^https?://[^/]+", "", url)


def track_requests(page) -> dict[str, list[str]]:
    """Full page loads (documents) and POSTs the page makes from now on."""
    seen = {"documents": [], "posts": []}

    def on_request(request):
        if request.resource_type == "document":
            seen["documents"].append(request.url)
        if request.method == "POST":
            seen["posts"].append(request.url)

    page.on("request", on_request)
    return seen


def test_three_pairs_are_rated_with_the_keyboard_and_swapped_in_without_reload(
    live_server, browser_page, expert, monkeypatch
):
    # Alternate the sides so that both orientations go through the canonical mapping.
    sides = itertools.cycle([False, True])
    monkeypatch.setattr(assignment_services, "_balanced_side", lambda counts: next(sides))
    page = browser_page
    # When each pair appeared, bounded from above: before the action that brought it in (a
    # reading taken after it was seen would lag on a loaded machine).
    shown_at = time.monotonic()
    current = log_in_and_start(page, live_server.url)
    page.evaluate("window.__marker = 1")
    requests = track_requests(page)

    # (keys pressed, the form scores they set): a digit scores the highlighted row, j moves on
    plan = [
        (["2", "j", "5"], {"overall": 2, "faithfulness": 5}),
        (["6"], {"overall": 6}),
        (["1", "j", "3", "j", "7"], {"overall": 1, "faithfulness": 3, "quality": 7}),
    ]
    rated: list[tuple[int, dict[str, int], float]] = []
    for number, (keys, scores) in enumerate(plan, start=1):
        assert page.inner_text("#workspace .position").startswith(f"Pair {number} of ")
        assert page.inner_text("#rating-form .scale-row.active legend").startswith("Overall")
        for key in keys:
            page.keyboard.press(key)
        checked = page.eval_on_selector_all(
            "#rating-form input[type=radio]:checked", "els => els.map(e => [e.name, e.value])"
        )
        expected = {
            ("overall" if name == "overall" else f"aspect_{name}"): str(score)
            for name, score in scores.items()
        }
        assert dict(checked) == expected
        # An annotator looks at the pair for a moment: longer than the tolerance below, so a
        # clock that did not restart with the pair would show.
        page.wait_for_timeout(1500)
        next_shown_at = time.monotonic()
        page.keyboard.press("Enter")
        on_screen = time.monotonic() - shown_at
        shown_at = next_shown_at
        following = wait_for_next_pair(page, current)
        rated.append((current, scores, on_screen))
        assert path_of(page.url) == reverse("annotate", args=[following])
        assert page.evaluate("window.__marker") == 1, "the page was reloaded"
        current = following

    assert requests["documents"] == [], "a full page load happened while rating"
    assert len(requests["posts"]) == 3
    assert page.inner_text("#workspace .position").startswith("Pair 4 of ")
    assert page.inner_text("#rating-form .scale-row.active legend").startswith("Overall")

    assert Rating.objects.filter(annotator=expert).count() == 3
    swapped_seen = set()
    for assignment_id, scores, on_screen in rated:
        assignment = Assignment.objects.get(pk=assignment_id)
        swapped_seen.add(assignment.swapped)
        assert assignment.status == Assignment.Status.SUBMITTED
        rating = Rating.objects.get(assignment=assignment, annotator=expert)
        assert rating.overall == to_canonical(scores["overall"], 7, assignment.swapped)
        stored = dict(AspectScore.objects.filter(rating=rating).values_list("aspect", "score"))
        assert stored == {
            key: to_canonical(score, 7, assignment.swapped)
            for key, score in scores.items()
            if key != "overall"
        }
        # The time counted is this pair's only: it restarts when the next pair swaps in.
        assert 0.5 <= rating.active_seconds <= on_screen + 0.5, (rating.active_seconds, on_screen)
    assert swapped_seen == {False, True}
    assert page.console_errors == []


def test_enter_without_an_overall_score_does_not_submit(live_server, browser_page, expert):
    page = browser_page
    assignment_id = log_in_and_start(page, live_server.url)
    requests = track_requests(page)
    left, right = (page.locator(f"#{side}").bounding_box() for side in ("left", "right"))
    assert left["y"] == right["y"]  # the two responses start level, side by side

    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    page.keyboard.press("j")  # to the first aspect: scoring it is not enough either
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)

    assert requests["posts"] == []
    assert shown_assignment(page) == assignment_id
    assert path_of(page.url) == reverse("annotate", args=[assignment_id])
    assert not Rating.objects.exists()
    assert Assignment.objects.get(pk=assignment_id).status == Assignment.Status.LEASED

    # Once the overall score is given, Enter submits.
    page.keyboard.press("o")
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    wait_for_next_pair(page, assignment_id)
    assignment = Assignment.objects.get(pk=assignment_id)
    rating = Rating.objects.get(assignment=assignment)
    assert rating.overall == to_canonical(5, 7, assignment.swapped)
    assert dict(rating.aspect_scores.values_list("aspect", "score")) == {
        "faithfulness": to_canonical(3, 7, assignment.swapped)
    }
    assert page.console_errors == []


def test_without_javascript_the_form_posts_and_redirects_to_the_next_pair(
    live_server, chromium_browser, expert
):
    context = chromium_browser.new_context(java_script_enabled=False)
    page = watch_errors(context.new_page())
    assignment_id = log_in_and_start(page, live_server.url)

    overall = page.locator("#rating-form fieldset.scale-row").first
    overall.locator("label.point", has=page.locator("input[value='3']")).click()
    assert overall.locator("input[value='3']").is_checked()
    with page.expect_navigation(timeout=WAIT_MS) as navigation:
        page.click("#rating-form button[type=submit]")
    response = navigation.value
    posted = response.request.redirected_from
    assert posted is not None and posted.method == "POST"
    assert "hx-request" not in posted.headers  # a plain form post, not htmx
    assert path_of(posted.url) == reverse("annotate", args=[assignment_id])
    following = int(ANNOTATE_URL.search(page.url).group(1))
    assert following != assignment_id
    assert shown_assignment(page) == following
    assert page.inner_text("#workspace .position").startswith("Pair 2 of ")

    assignment = Assignment.objects.get(pk=assignment_id)
    assert assignment.status == Assignment.Status.SUBMITTED
    rating = Rating.objects.get(assignment=assignment)
    assert rating.overall == to_canonical(3, 7, assignment.swapped)
    assert rating.active_seconds >= 0  # the server's fallback: time since the claim
    assert Assignment.objects.get(pk=following).status == Assignment.Status.LEASED
    assert page.console_errors == []
    context.close()


def test_clicking_an_image_opens_its_file_in_the_viewer_and_escape_or_close_shuts_it(
    live_server, browser_page, expert
):
    """The viewer's zoom, pan and compare modes: test_viewer_browser.py."""
    page = browser_page
    log_in_and_start(page, live_server.url)

    for side, close_with in (("left", "Escape"), ("right", "button")):
        link = page.locator(f"#{side} a.zoomable").first
        sha = link.get_attribute("href").rstrip("/").rsplit("/", 1)[-1]
        asset = Asset.objects.get(sha256=sha)
        link.locator("img").click()
        page.wait_for_selector("#zoom[open]", timeout=WAIT_MS)
        first = "#zoom .viewer-stage img"
        page.wait_for_function(
            "sel => { const img = document.querySelector(sel);"
            " return img.complete && img.naturalWidth > 0; }",
            arg=first,
            timeout=WAIT_MS,
        )
        assert page.get_attribute(first, "src") == live_server.url + reverse(
            "asset-file", args=[sha]
        )
        natural = page.eval_on_selector(first, "img => [img.naturalWidth, img.naturalHeight]")
        assert natural == [asset.width, asset.height]
        assert len(page.context.pages) == 1, "the image opened in a new tab"

        if close_with == "Escape":
            page.keyboard.press("Escape")
        else:
            page.click("#zoom .viewer-close")
        page.wait_for_selector("#zoom:not([open])", state="attached", timeout=WAIT_MS)

    # The keyboard works again once the viewer is closed.
    page.keyboard.press("6")
    assert page.is_checked("#rating-form input[name=overall][value='6']")
    assert page.console_errors == []


def test_question_mark_shows_the_shortcuts_and_s_skips_with_a_preset_reason_and_a_note(
    live_server, browser_page, expert
):
    page = browser_page
    assignment_id = log_in_and_start(page, live_server.url)
    page.evaluate("window.__marker = 1")

    page.keyboard.press("?")
    page.wait_for_selector("#shortcuts[open]", timeout=WAIT_MS)
    assert "Keyboard shortcuts" in page.inner_text("#shortcuts")
    page.keyboard.press("Escape")
    page.wait_for_selector("#shortcuts:not([open])", state="attached", timeout=WAIT_MS)

    page.keyboard.press("s")
    assert page.eval_on_selector("#skip-panel", "panel => panel.open") is True
    # The first preset reason has the focus; arrows choose another, a note is optional.
    assert page.evaluate("document.activeElement.name") == "skip_reason"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.value") == "Cannot decide without more context"
    page.fill("input[name=skip_note]", "needs the source image")
    page.keyboard.press("Enter")
    following = wait_for_next_pair(page, assignment_id)

    assert path_of(page.url) == reverse("annotate", args=[following])
    assert page.evaluate("window.__marker") == 1, "the page was reloaded"
    skipped = Assignment.objects.get(pk=assignment_id)
    assert skipped.status == Assignment.Status.SKIPPED
    assert skipped.skip_reason == "Cannot decide without more context: needs the source image"
    # the confirmation, on its line under the pair counter
    assert page.text_content("#workspace .toast").strip() == "Pair skipped."
    assert not Rating.objects.exists()
    assert Assignment.objects.get(pk=following).status == Assignment.Status.LEASED
    assert page.console_errors == []


@pytest.mark.parametrize("size", [(1366, 768), (390, 844)], ids=["laptop", "phone"])
def test_a_link_to_the_next_pair_offers_a_start_button_that_enter_presses(
    live_server, browser_page, expert, size
):
    from tests.axe import serious_violations

    page = browser_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "expert")
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(f"{live_server.url}/", timeout=WAIT_MS)
    task = expert.memberships.get().project.tasks.get()
    page.goto(live_server.url + reverse("task-next", args=[task.project.slug, task.slug]))
    assert not Assignment.objects.filter(annotator=expert).exists()  # a GET claims nothing
    assert page.get_by_role("heading", level=1).inner_text() == task.name
    assert serious_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= size[0]
    page.keyboard.press("Enter")  # the button has the focus
    page.wait_for_url(ANNOTATE_URL, timeout=WAIT_MS)
    assert Assignment.objects.filter(annotator=expert).count() == 1
