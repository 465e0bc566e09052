"""The next pair's images are preloaded while the expert rates: once the page is idle the
browser has downloaded the images of the pair likely next, without showing anything of it;
Enter then shows that pair with those images, which are not downloaded again. Debian's
Chromium through Playwright at 1366×768."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment
from annotation.selectors.upcoming import upcoming_images
from tests.annotate.test_browser import WAIT_MS, log_in_and_start, wait_for_next_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 768}

# Resource Timing entries of the page for these addresses: (name, bytes over the network).
ENTRIES = """urls => performance.getEntriesByType("resource")
    .filter(e => urls.some(u => e.name.endsWith(u)))
    .map(e => [new URL(e.name).pathname, e.transferSize])"""


def test_the_likely_next_pair_is_preloaded_unseen_and_shown_from_the_cache(
    live_server, browser_page, expert
):
    page = browser_page
    page.set_viewport_size(DESKTOP)
    current = log_in_and_start(page, live_server.url)
    expected = [
        reverse("asset-file", args=[sha])
        for sha in upcoming_images(expert, current, timezone.now())
    ]
    assert len(expected) == 2  # one image in each response of the queued pairs
    # Once idle, the page has fetched every image of the likely next pair...
    page.wait_for_function(
        f"urls => ({ENTRIES})(urls).length >= urls.length", arg=expected, timeout=WAIT_MS
    )
    # ...without adding anything to the page: no element names them, no text changed.
    shown = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.getAttribute('src'))")
    assert not set(shown) & set(expected)
    assert not page.evaluate(
        "urls => Array.from(document.querySelectorAll('[src], [href]'))"
        ".some(e => urls.some(u => (e.getAttribute('src') || e.getAttribute('href')) === u))",
        expected,
    )
    before = page.evaluate("document.body.innerText")
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    following = wait_for_next_pair(page, current)
    next_prompt = Assignment.objects.get(pk=following).pair.prompt.content[0][1]
    assert next_prompt.split(",")[0] not in before  # the next pair's text was not on the page
    assert next_prompt.split(",")[0] in page.evaluate("document.body.innerText")

    # The next pair shows the preloaded images, complete, and nothing downloaded them again.
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('#workspace .responses img'))"
        ".every(i => i.complete && i.naturalWidth > 0)",
        timeout=WAIT_MS,
    )
    now_shown = page.eval_on_selector_all(
        "#workspace .responses img", "imgs => imgs.map(i => i.getAttribute('src'))"
    )
    assert sorted(now_shown) == sorted(expected)
    entries = page.evaluate(ENTRIES, expected)
    for url in expected:
        sizes = [size for name, size in entries if name == url]
        assert sizes[0] > 0 and all(size == 0 for size in sizes[1:]), (url, sizes)
    assert page.console_errors == []
