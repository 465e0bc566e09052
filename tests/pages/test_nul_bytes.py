"""A NUL character in anything a page's form sends answers 400 with a page saying why, never a
500, and the view never runs (core/nul_characters.py): every form of every page of a lead and
of an annotator, as the page itself offers it, sent back with a NUL in each field."""

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from annotation.models import Assignment
from content.models import Pair
from tests.pages.browsing import lead_pages

pytestmark = pytest.mark.django_db

NUL = "\x00"
REFUSAL = "NUL character"


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[tuple[str, str, str]] = field(default_factory=list)  # name, value, formaction


class _Forms(HTMLParser):
    """Each form of a page with the value its fields hold (the first of a radio group, the
    chosen option of a select, else its first)."""

    def __init__(self, page_path: str):
        super().__init__()
        self.page_path, self.forms, self.form, self.select = page_path, [], None, None

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if tag == "form":
            method = (a.get("method") or "get").lower()
            action = a.get("hx-post") or a.get("action") or self.page_path
            if a.get("hx-post"):
                method = "post"
            self.form = Form(action, method) if method in ("get", "post") else None
            if self.form is not None:
                self.forms.append(self.form)
            return
        if self.form is None:
            return
        if tag == "option" and self.select:
            if "selected" in a or self.select not in self.form.fields:
                self.form.fields[self.select] = a.get("value", "")
            return
        name = a.get("name")
        if not name:
            return
        if tag == "button" or (tag == "input" and a.get("type") in ("submit", "image")):
            self.form.buttons.append((name, a.get("value", ""), a.get("formaction", "")))
        elif tag == "input" and a.get("type") != "file":
            self.form.fields.setdefault(name, a.get("value", "on"))
        elif tag == "textarea":
            self.form.fields.setdefault(name, "")
        elif tag == "select":
            self.select = name

    def handle_endtag(self, tag):
        if tag == "form":
            self.form = None
        elif tag == "select":
            self.select = None


def forms_of(client, path: str) -> list[Form]:
    answer = client.get(path, follow=True)
    page_path = answer.request["PATH_INFO"]
    assert answer.status_code == 200 and page_path != reverse("login"), (path, page_path)
    parser = _Forms(page_path)
    parser.feed(answer.content.decode())
    return parser.forms


def with_nul(form: Form) -> list[tuple[str, dict[str, str]]]:
    """(action, data) to send: every field's value with a NUL in it, once per named button."""
    data = {name: f"{value}{NUL}x" for name, value in form.fields.items()}
    if not form.buttons:
        return [(form.action, data)]
    return [
        (formaction or form.action, {**data, name: value})
        for name, value, formaction in form.buttons
    ]


def send_every_form_with_a_nul(client, user, paths) -> int:
    """Send back each form of each page with a NUL in its fields, signed in as `user` (again
    before each: the sign-out form must not sign out); the number of forms sent. Each answer
    must be the 400 saying why, and leave the data as it was."""
    client.raise_request_exception = False  # a 500 is listed with the rest, not raised
    sent, wrong = 0, []
    for path in paths:
        client.force_login(user)
        for form in forms_of(client, path):
            for action, data in with_nul(form):
                target = urlsplit(action).path or path
                client.force_login(user)
                before = _stored()
                if form.method == "get":
                    answer = client.get(target, data)
                else:
                    answer = client.post(target, data)
                where = (path, form.method, target, sorted(data), answer.status_code)
                if answer.status_code != 400 or REFUSAL not in answer.content.decode():
                    wrong.append(where)
                elif _stored() != before:
                    wrong.append((*where, "stored"))
                sent += 1
    assert not wrong, "\n".join(map(str, wrong))
    return sent


def _stored() -> tuple:
    """What a form of these pages could have changed: pairs, assignments, ratings' counts."""
    return (
        Assignment.objects.count(),
        list(Assignment.objects.order_by("pk").values_list("status", flat=True)),
        list(Pair.objects.order_by("pk").values_list("status", "rating_count")),
    )


def test_every_form_of_a_leads_pages_refuses_a_nul_with_a_400(client, lead_site):
    project, lead = lead_site
    pages = [path for _name, path in lead_pages(project)]
    assert send_every_form_with_a_nul(client, lead, pages) >= 40  # the pages' forms were found


def test_every_form_of_an_annotators_pages_refuses_a_nul_with_a_400(client, annotator):
    annotate = _started(client, annotator)
    pages = [
        reverse("home"),
        annotate,  # the rating with its rationale, the question, the skip and flag notes
        reverse("notifications"),
        reverse("notification-settings"),
        reverse("password_change"),
    ]
    assert send_every_form_with_a_nul(client, annotator, pages) >= 8


def test_a_nul_in_a_search_or_a_path_is_a_400_or_a_404_not_a_500(client, lead_site):
    project, lead = lead_site
    client.force_login(lead)
    pairs = reverse("dash-pairs", args=[project.slug])
    assert client.get(pairs, {"q": f"cat{NUL}"}).status_code == 400
    assert client.get(reverse("asset-file", args=["a" * 63 + NUL])).status_code == 404


def test_text_without_a_nul_still_reaches_the_form(client, annotator):
    annotate = _started(client, annotator)
    answer = client.post(annotate + "question/", {"body": "Is the left image cropped?"})
    assert answer.status_code < 400
    assert "Is the left image cropped?" in client.get(annotate).content.decode()


def _started(client, annotator) -> str:
    """The annotate page of a pair the annotator just started (the Start button's post)."""
    client.force_login(annotator)
    answer = client.post(reverse("task-next", args=["second", "edit"]), follow=True)
    assert answer.status_code == 200
    assignment = Assignment.objects.get(annotator=annotator, status="leased")
    return reverse("annotate", args=[assignment.pk])


@pytest.mark.parametrize("text", ["body", "rationale", "skip_note", "flag_note"])
def test_an_annotators_own_text_with_a_nul_stores_nothing(client, annotator, text):
    """The four texts an annotator writes on the annotate page, each alone holding the NUL,
    the rest of its form as the page fills it (a rating's scores, a skip's reason)."""
    from annotation.models import PairMessage, Rating

    annotate = _started(client, annotator)
    form = next(form for form in forms_of(client, annotate) if text in form.fields)
    data = {**form.fields, text: f"it{NUL}s"}
    if form.buttons:
        data.update({form.buttons[0][0]: form.buttons[0][1]})
    before = (Rating.objects.count(), PairMessage.objects.count(), _stored())
    answer = client.post(urlsplit(form.action).path, data)
    assert answer.status_code == 400 and REFUSAL in answer.content.decode()
    assert (Rating.objects.count(), PairMessage.objects.count(), _stored()) == before
    assert client.get(annotate).status_code == 200  # the pair is still the annotator's
