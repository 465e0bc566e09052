"""Walks through every page each role opens, for the sweeps of the pages (axe-core in both
schemes and both languages: tests/pages/test_dark_mode.py). A walk is a generator: it opens a
page, or brings the open one into a state (a menu, a panel, a dialog open, a form refused),
waits until it has settled, and yields the state's name. `site` is the every_role fixture
(tests/pages/conftest.py). Walks find things by their place, never by their words: the same
walk runs in English and in Chinese."""

import re

from django.contrib.auth.tokens import default_token_generator
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation.models import Assignment
from content.models import Pair
from core.unavailable import MESSAGE
from tests.pages.browsing import PASSWORD, WAIT_MS, lead_pages, open_settled
from tests.settling import settled


def _submit(page, selector: str) -> None:
    """Click a form's submit button and wait for the page it loads."""
    with page.expect_navigation():
        page.click(selector)
    settled(page)


def lead_walk(page, base: str, site):
    """lead_pages(), then the states only a click reaches: the pair browser's menus, its bulk
    action confirmed and refused, a pair opened from the disagreement queue, a new invitation
    link on the members page; then the API's documentation."""
    slug = site.project.slug
    for name, path in lead_pages(site.project):
        open_settled(page, base + path)
        yield name
    open_settled(page, base + reverse("dash-pairs", args=[slug]))
    page.click("details.pairs-more > summary")
    page.click("details.pairs-view-save > summary")
    yield "dash-pairs: more filters, saving a view"
    page.check("#pairs-bulk input[name=scope][value=all]")
    page.select_option("#pairs-bulk select[name=action]", index=1)
    _submit(page, "#pairs-bulk button[type=submit]")
    yield "dash-pairs-bulk: the confirmation"
    open_settled(page, base + reverse("dash-pairs", args=[slug]))
    page.select_option("#pairs-bulk select[name=action]", index=1)  # and no pair ticked
    _submit(page, "#pairs-bulk button[type=submit]")
    page.wait_for_selector(".messages .message.error", timeout=WAIT_MS)
    yield "dash-pairs: a refused action's message"
    open_settled(page, base + reverse("dash-disagreements", args=[slug]))
    with page.expect_navigation():
        page.locator(f"main a[href*='/projects/{slug}/pairs/']").first.click()
    settled(page)
    yield "dash-pair: opened from the disagreement queue"
    open_settled(page, base + reverse("project-members", args=[slug]))
    _submit(page, "form.card.form:not(#add-member) button[type=submit]")
    page.wait_for_selector("#invitation-link", timeout=WAIT_MS)
    yield "project-members: a new invitation link"
    yield from api_docs_walk(page, base)


# The API's documentation (Swagger UI, ReDoc): third-party pages in English whatever the
# language, in their own light colours whatever the theme.
API_DOCS = ("api-docs", "api-redoc")


def api_docs_walk(page, base: str):
    """The API's pages of the account menu (leads and operators): Swagger UI as it opens, an
    operation tried out (its request and answer), its authorizations dialog; ReDoc."""
    open_settled(page, base + reverse("api-docs"))
    page.wait_for_selector(".swagger-ui .opblock-summary", timeout=WAIT_MS)
    yield "api-docs"
    operation = page.locator("#operations-projects-projects_list")
    operation.locator(".opblock-summary-control").click()
    operation.locator(".try-out__btn").click()
    operation.locator(".btn.execute").click()
    operation.locator(".live-responses-table").wait_for(timeout=WAIT_MS)
    settled(page)
    page.mouse.move(0, 0)  # off the button, and its colour's transition over
    page.wait_for_function("() => document.getAnimations().length === 0", timeout=WAIT_MS)
    yield "api-docs: an operation tried out, its answer shown"
    page.click(".swagger-ui .btn.authorize")
    page.wait_for_selector(".swagger-ui .dialog-ux .close-modal[aria-label]", timeout=WAIT_MS)
    yield "api-docs: the authorizations dialog"
    open_settled(page, base + reverse("api-redoc"))
    page.wait_for_selector("#redoc-container h1", timeout=WAIT_MS)
    yield "api-redoc"


def annotator_walk(page, base: str, site):
    """The annotator's home page, the annotate page in every state (the recent ratings, the
    questions, skip and flag panels, the shortcuts, the image viewer, after a rating, after a
    skip with its Undo), a rated pair reopened with its answered question, the "ready" and
    "done" pages, their own work and ratings, notifications, their password changed, a lead's
    page refused (403)."""
    project = site.project
    open_settled(page, base + reverse("home"))
    yield "home"
    with page.expect_navigation(url=re.compile(r"/annotate/\d+/$")):
        page.click("form[action$='/projects/second/tasks/t2i/next/'] button")
    settled(page)
    yield "annotate"
    page.keyboard.press("4")  # the chosen point: text on the accent
    page.wait_for_selector("#rating-form .point:has(input:checked)")
    page.click("details.recent > summary")
    yield "annotate: scored, the recent ratings open"
    page.click("details.recent > summary")
    page.click("details.questions > summary")
    yield "annotate: the questions open"
    page.click("details.questions > summary")
    page.click("#skip-panel > summary")
    yield "annotate: the skip panel open"
    page.click("#skip-panel > summary")
    page.click("#flag-panel > summary")
    yield "annotate: the flag panel open"
    page.click("#flag-panel > summary")
    page.click("button[data-open=shortcuts]")
    page.wait_for_selector("dialog#shortcuts[open]", timeout=WAIT_MS)
    yield "annotate: the shortcuts"
    page.keyboard.press("Escape")
    page.locator("a.zoomable").first.click()  # the image viewer, dark in both schemes
    page.wait_for_selector("dialog.viewer[open]", timeout=WAIT_MS)
    yield "annotate: the image viewer"
    page.click("dialog.viewer button[data-viewer=swipe]")
    page.wait_for_selector("dialog.viewer .viewer-split:not([hidden])", timeout=WAIT_MS)
    yield "annotate: the image viewer, swiping"
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('dialog.viewer').open", timeout=WAIT_MS)
    rated = page.get_attribute("#workspace", "data-assignment")
    page.click("#rating-form button[type=submit]")
    page.wait_for_function(
        "id => document.querySelector('#workspace').dataset.assignment !== id", arg=rated
    )
    settled(page)
    yield "annotate: the next pair after a rating"
    page.click("#skip-panel > summary")
    page.click("#skip-panel button[type=submit]")
    page.wait_for_selector("#workspace.done", timeout=WAIT_MS)  # the task's last pair
    settled(page)
    yield "annotate: done after a skip, its Undo offered"
    first = Pair.objects.filter(task__project=project).order_by("pk").first()
    reopened = Assignment.objects.get(pair=first, annotator=site.annotator)
    open_settled(page, base + reverse("annotate", args=[reopened.pk]))
    page.click("details.questions > summary")
    yield "annotate: a rated pair reopened, its answered question open"
    open_settled(page, base + reverse("task-next", args=["second", "edit"]))
    yield "task-next: ready"
    task = project.tasks.order_by("pk").first()
    open_settled(page, base + reverse("task-next", args=[project.slug, task.slug]))
    yield "task-next: done"
    for name in ("own-work", "own-ratings"):
        open_settled(page, base + reverse(name, args=[project.slug]))
        yield name
    for name in ("notifications", "notification-settings"):
        open_settled(page, base + reverse(name))
        yield name
    open_settled(page, base + reverse("password_change"))
    page.fill("input[name=old_password]", PASSWORD)
    page.fill("input[name=new_password1]", "a-new-password-1")
    page.fill("input[name=new_password2]", "a-new-password-1")
    _submit(page, "main form button[type=submit]")
    assert page.url.endswith(reverse("password_change_done")), page.url
    yield "password_change_done"
    open_settled(page, base + reverse("dash-overview", args=[project.slug]))
    yield "403: a lead's page"


def operator_walk(page, base: str, site):
    """The operator's pages outside the admin: their home page (every project), the whole
    audit trail, and the trail refusing a wrong filter."""
    open_settled(page, base + reverse("home"))
    yield "home"
    open_settled(page, base + reverse("operator-audit"))
    yield "operator-audit"
    open_settled(page, base + reverse("operator-audit") + "?since=not-a-date")
    yield "operator-audit: a wrong filter"


def anonymous_walk(page, base: str, site):
    """What anyone opens signed out: the sign-in page and its refusal, the password reset pages
    (a link that works and one that does not), an invitation link (its form, the form refused,
    a dead link), and the error pages: a page that does not exist (404), a NUL character sent
    (400), a form sent after the session ended (403), the database lost (503)."""
    open_settled(page, base + reverse("login"))
    yield "login"
    page.fill("input[name=username]", "nobody")
    page.fill("input[name=password]", "wrong-password")
    _submit(page, "main form button[type=submit]")
    yield "login: refused"
    open_settled(page, base + reverse("password_reset"))
    yield "password_reset"
    page.fill("input[name=email]", site.annotator.email)
    _submit(page, "main form button[type=submit]")
    yield "password_reset_done"
    user = site.annotator
    link = reverse(
        "password_reset_confirm",
        args=[
            urlsafe_base64_encode(force_bytes(user.pk)),
            default_token_generator.make_token(user),
        ],
    )
    open_settled(page, base + link)  # Django moves the token out of the address
    page.wait_for_selector("input[name=new_password1]", timeout=WAIT_MS)
    page.fill("input[name=new_password1]", "a-new-password-1")
    page.fill("input[name=new_password2]", "another-password-2")
    _submit(page, "main form button[type=submit]")
    yield "password_reset_confirm: passwords that differ"
    open_settled(page, base + reverse("password_reset_confirm", args=["MQ", "no-such-token"]))
    yield "password_reset_confirm: a dead link"
    open_settled(page, base + reverse("password_reset_complete"))
    yield "password_reset_complete"
    open_settled(page, base + reverse("invite", args=[site.invitation]))
    yield "invite"
    page.fill("input[name=username]", "newcomer")
    page.fill("input[name=password1]", "a-new-password-1")
    page.fill("input[name=password2]", "another-password-2")
    _submit(page, "main form button[type=submit]")
    yield "invite: passwords that differ"
    open_settled(page, base + reverse("invite", args=["no-such-invitation"]))
    yield "invite: a dead link"
    open_settled(page, base + "/no/such/page/")
    yield "404"
    open_settled(page, base + reverse("login") + "?next=%00")
    yield "400: a NUL character sent"
    open_settled(page, base + reverse("login"))
    page.context.clear_cookies()  # the session ended while the form was open
    page.fill("input[name=username]", "nobody")
    page.fill("input[name=password]", "wrong-password")
    _submit(page, "main form button[type=submit]")
    yield "403: a form sent without its CSRF cookie"
    # The database lost: core/unavailable.py's page, served here as it would be then.
    language = "zh-hans" if page.evaluate("navigator.language").startswith("zh") else "en"
    with translation.override(language):
        body = render_to_string("503.html", {"message": MESSAGE})
    page.route(f"{base}/_unavailable/", lambda route: route.fulfill(status=503, body=body))
    open_settled(page, f"{base}/_unavailable/")
    yield "503"


WALKS = {
    "lead": lead_walk,
    "annotator": annotator_walk,
    "operator": operator_walk,
    "anonymous": anonymous_walk,
}
