"""Qualification and gold checks in a real browser: an annotator of a task with a
qualification set answers it first, with feedback after each answer, then gets the real queue;
a gold check mixed into that queue looks exactly like any other pair."""

import pytest

from annotation.gold.services import GoldEntry, gold_set
from annotation.models import Assignment
from content.models import Pair
from projects.models import Task
from projects.scale import to_form
from tests.annotate.test_browser import WAIT_MS, log_in_and_start, wait_for_next_pair
from tests.factories import member, queued_pairs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SKELETON = """() => {
  const ws = document.getElementById("workspace");
  const classes = new Set();
  // The feedback on the previous (qualification) answer is not part of this pair's page.
  ws.querySelectorAll("*:not(.feedback)").forEach(
    el => el.classList.forEach(c => classes.add(el.tagName + "." + c)));
  const inputs = [...ws.querySelectorAll("form input, form select, form textarea")]
    .map(el => el.tagName + ":" + el.type + ":" + el.name).sort();
  const data = Object.keys(ws.dataset).sort();
  return {classes: [...classes].sort(), inputs: [...new Set(inputs)], data};
}"""

PAGE_WITHOUT_FEEDBACK = """() => {
  const copy = document.documentElement.cloneNode(true);
  copy.querySelectorAll(".feedback").forEach(el => el.remove());
  return copy.outerHTML;
}"""


@pytest.fixture
def qualifying(tmp_path):
    task = queued_pairs(tmp_path, count=10)
    Task.objects.filter(pk=task.pk).update(
        qualification_required=True, qualification_pass=0.5, gold_rate=0.5
    )
    pairs = list(Pair.objects.filter(task=task).order_by("id"))
    gold_set(
        task,
        [GoldEntry(p.external_id, "A", "A draws the scene asked for", True) for p in pairs[:2]]
        + [GoldEntry(pairs[2].external_id, "B", "mixed check")],
    )
    member("expert", task.project)
    return {"qualification": {p.pk for p in pairs[:2]}, "mixed": pairs[2].pk}


def pair_of(assignment_id: int) -> int:
    return Assignment.objects.get(pk=assignment_id).pair_id


def key_for_a(assignment_id: int) -> str:
    """The form key that says "A better" on this assignment: A is on the left unless the
    assignment is swapped (each pair's orientation is a coin toss for its first annotator)."""
    swapped = Assignment.objects.get(pk=assignment_id).swapped
    return str(to_form(6, 7, swapped))


def test_the_qualification_comes_first_with_feedback_then_the_queue_where_gold_is_unmarked(
    live_server, browser_page, qualifying
):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    current = log_in_and_start(page, live_server.url)
    for _ in range(2):  # the qualification set, in order, each answer followed by feedback
        assert pair_of(current) in qualifying["qualification"]
        # Answered right: two wrong answers would (rightly) hold the annotator back.
        page.keyboard.press(key_for_a(current))
        page.keyboard.press("Enter")
        current = wait_for_next_pair(page, current)
        feedback = page.locator("#workspace .feedback")
        feedback.wait_for(timeout=WAIT_MS)
        assert "Qualification:" in feedback.inner_text()
        assert "A draws the scene asked for" in feedback.inner_text()
    # Then the real queue, with the mixed gold check among the next pairs.
    skeletons = {}
    for _ in range(4):
        pair_id = pair_of(current)
        assert pair_id not in qualifying["qualification"]
        kind = "gold" if pair_id == qualifying["mixed"] else "normal"
        skeletons.setdefault(kind, page.evaluate(SKELETON))
        if kind == "gold":  # the page, less the feedback on the previous answer
            html = page.evaluate(PAGE_WITHOUT_FEEDBACK).lower()
            assert "gold" not in html and "qualification" not in html
            assert "mixed check" not in html
        page.keyboard.press("3")
        page.keyboard.press("Enter")
        current = wait_for_next_pair(page, current)
        assert page.locator("#workspace .feedback").count() == 0  # no feedback in the queue
    assert set(skeletons) == {"gold", "normal"}
    gold, normal = skeletons["gold"], skeletons["normal"]
    assert set(gold["classes"]) ^ set(normal["classes"]) == set()
    assert gold == normal
    assert page.console_errors == []
