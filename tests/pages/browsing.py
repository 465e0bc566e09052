"""Helpers of the pages' browser tests: signing in, and the list of a lead's pages."""

from django.urls import reverse

from annotation.models import Rating
from content.models import Pair
from judging.models import Judge, JudgeRun
from tests.conftest import watch_errors
from tests.settling import settled

WAIT_MS = 10_000
PASSWORD = "pw-pages-1"
DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}


def log_in(browser, base_url: str, user, viewport=DESKTOP):
    """A page in a new browser context (of `viewport`), signed in as `user` through the login
    form, on the home page; `page.console_errors` lists what went wrong in it."""
    user.set_password(PASSWORD)
    user.save()
    page = watch_errors(browser.new_context(viewport=viewport).new_page())
    page.goto(base_url + reverse("login"))
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(base_url + "/", timeout=WAIT_MS)
    return page


def lead_pages(project) -> list[tuple[str, str]]:
    """(URL name, path) of every page a lead of `project` opens by its address, the annotate
    page aside (the states only a click reaches: tests/pages/walks.py)."""
    slug = project.slug
    pair = Pair.objects.filter(task__project=project).order_by("pk").first()
    run = JudgeRun.objects.filter(project=project).order_by("pk").first()
    task = project.tasks.order_by("pk").first()
    judge = Judge.objects.filter(project=project).order_by("pk").first()
    rater = Rating.objects.filter(pair__project=project, imported=False).order_by("pk").first()
    pages = [
        ("home", reverse("home")),
        ("project-new", reverse("project-new")),
        ("password_change", reverse("password_change")),
        ("api-tokens", reverse("api-tokens")),
        ("notifications", reverse("notifications")),
        ("notification-settings", reverse("notification-settings")),
        ("dash-pair", reverse("dash-pair", args=[slug, pair.pk])),
        ("dash-annotator", reverse("dash-annotator", args=[slug, rater.annotator_id])),
        ("run-detail", reverse("run-detail", args=[slug, run.pk])),
        ("task-edit", reverse("task-edit", args=[slug, task.slug])),
        ("judge-edit", reverse("judge-edit", args=[slug, judge.pk])),
        ("template-edit", reverse("template-edit", args=[slug, "mmrb2-t2i"])),
    ]
    for name in ["dash-overview", "dash-pairs", "dash-disagreements", "dash-agreement",
                 "dash-judges", "dash-models", "dash-hours", "dash-exports", "project-data",
                 "project-settings", "project-members", "task-new", "run-list", "ensemble",
                 "judge-list", "judge-new", "template-list", "template-new",
                 "project-webhooks", "project-audit", "own-work", "own-ratings"]:  # fmt: skip
        pages.append((name, reverse(name, args=[slug])))
    return pages


def open_settled(page, url: str):
    """Open `url` and wait until its requests (scripts, htmx polls started at load) settle."""
    page.goto(url)
    settled(page)
    return page
