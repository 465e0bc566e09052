"""Finding English left in a page rendered in another language.

A page's words come from two places: the interface (templates, forms, messages: translated)
and the data (names, prompts, responses, usernames: shown as they were written). `english_left`
reads the text a person sees or hears — text nodes and the attributes read aloud or shown
(title, aria-label, placeholder, alt, a button's value) — leaves out code-like elements and any
element marked `translate="no"`, and returns the English words that are neither data
(`data_words`: every word stored in the project's text columns) nor in the short list of names
that stay as they are in every language."""

import re
from html.parser import HTMLParser

from django.apps import apps
from django.db import models

# Names and units that a translation keeps as they are.
KEPT = {
    "arbiter", "mmrb2", "mjbench", "mj", "bench", "csv", "json", "jsonl", "parquet", "api",
    "url", "http", "https", "html", "likert", "openai", "anthropic", "celery", "redis",
    "postgresql", "sqlite", "kappa", "krippendorff", "alpha", "fleiss", "cohen", "spearman",
    "kendall", "tau", "mace", "glad", "ppi", "auc", "roc", "ece", "elo", "bradley", "terry",
    "webhook", "hmac", "sha", "png", "jpeg", "webp", "gif", "ctrl", "esc", "tab", "enter",
    "backspace", "english", "utc", "iso", "oidc", "s3", "id", "ids", "ok", "htmx", "redoc",
    "swagger", "prometheus", "dawid", "skene", "wilson", "trl", "dpo",
}  # fmt: skip
# Where the words are code, keys or data by nature.
SKIPPED_ELEMENTS = {"script", "style", "code", "kbd", "pre", "textarea", "samp", "var"}
READ_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt", "aria-description"}
WORD = re.compile(r"[A-Za-z][A-Za-z']{2,}")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}  # fmt: skip


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: is its text skipped?
        self.texts: list[str] = []

    def _skipped(self) -> bool:
        return bool(self.stack) and self.stack[-1]

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        skipped = self._skipped() or tag in SKIPPED_ELEMENTS or values.get("translate") == "no"
        if not skipped:
            self.texts.extend(v for k, v in attrs if k in READ_ATTRIBUTES and v)
            if (
                tag == "input"
                and values.get("type") in {"submit", "button"}
                and values.get("value")
            ):
                self.texts.append(values["value"])
        if tag not in VOID:
            self.stack.append(skipped)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not self._skipped() and data.strip():
            self.texts.append(data)


def visible_texts(html: str) -> list[str]:
    reader = _Reader()
    reader.feed(html)
    return reader.texts


def english_left(html: str, data: set[str]) -> list[str]:
    """The texts of `html` that still hold an English word, each once."""
    found = []
    for text in visible_texts(html):
        words = {w.lower().strip("'") for w in WORD.findall(text)}
        if words - KEPT - data and text.strip() not in found:
            found.append(" ".join(text.split()))
    return found


def data_words() -> set[str]:
    """Every word stored in a text column of Arbiter's own tables (names, prompts, responses,
    notes) and every username: what a page shows as the data, in whatever language it was
    written. Columns with choices are left out: their labels are the interface's."""
    words: set[str] = set()
    ours = {"projects", "content", "annotation", "imports", "judging", "exports", "dashboards",
            "notifications", "webhooks", "metrics", "operations"}  # fmt: skip
    for model in apps.get_models():
        if model._meta.app_label not in ours and model._meta.label != "auth.User":
            continue
        fields = [
            f.name
            for f in model._meta.concrete_fields
            if isinstance(f, models.CharField | models.TextField | models.JSONField)
            and not f.choices
        ]
        if model._meta.label == "auth.User":
            fields = ["username", "first_name", "last_name", "email"]
        if not fields:
            continue
        for row in model.objects.values_list(*fields):
            for value in row:
                if value:
                    # strip("'"): a JSON value's repr quotes its strings ('a.zip')
                    words.update(w.lower().strip("'") for w in WORD.findall(str(value)))
    return words
