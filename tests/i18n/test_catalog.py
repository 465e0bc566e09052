"""The Simplified Chinese catalogs are complete and current: every string the
interface marks for translation has a translation (none empty, none fuzzy), each translation
keeps its placeholders, one word stands for each concept, and the compiled django.mo that
Django reads holds exactly what the django.po under review says (`make messages` writes both;
a fresh machine needs no gettext)."""

import re
from pathlib import Path

import polib
import pytest

LOCALE = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES"
DOMAINS = [p.stem for p in sorted(LOCALE.glob("*.po"))]
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|%[sd]|\{\w*\}")


def test_there_is_a_chinese_catalog_for_the_pages():
    assert "django" in DOMAINS


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_string_is_translated_and_none_is_fuzzy(domain):
    catalog = polib.pofile(str(LOCALE / f"{domain}.po"))
    assert [e.msgid for e in catalog.untranslated_entries()] == []
    assert [e.msgid for e in catalog.fuzzy_entries()] == []


@pytest.mark.parametrize("domain", DOMAINS)
def test_each_translation_keeps_the_placeholders_of_its_string(domain):
    changed = []
    for entry in polib.pofile(str(LOCALE / f"{domain}.po")).translated_entries():
        pairs = [(entry.msgid, entry.msgstr)]
        if entry.msgid_plural:
            pairs = [(entry.msgid_plural, text) for text in entry.msgstr_plural.values()]
        for source, translation in pairs:
            if sorted(PLACEHOLDER.findall(source)) != sorted(PLACEHOLDER.findall(translation)):
                changed.append((source, translation))
    assert changed == []


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_compiled_catalog_is_the_reviewed_one(domain):
    def entries(catalog):
        return {
            (e.msgctxt, e.msgid): (e.msgstr, tuple(sorted(e.msgstr_plural.items())))
            for e in catalog
            if e.msgid and (e.msgstr or any(e.msgstr_plural.values()))
        }

    written = polib.pofile(str(LOCALE / f"{domain}.po"))
    compiled = polib.mofile(str(LOCALE / f"{domain}.mo"))
    assert entries(compiled) == entries(written), "run `make messages`"


# One word per concept, as the interface's glossary: the role is 标注专家 (what the role
# select says), the reader is addressed as 您 throughout. A variant makes the same thing read as
# two things on one page.
VARIANTS = {"标注员": "标注专家", "你": "您"}


@pytest.mark.parametrize("domain", DOMAINS)
def test_each_concept_has_one_word(domain):
    stray = [
        (entry.msgid, variant, preferred)
        for entry in polib.pofile(str(LOCALE / f"{domain}.po")).translated_entries()
        for text in [entry.msgstr, *entry.msgstr_plural.values()]
        for variant, preferred in VARIANTS.items()
        if variant in text
    ]
    assert stray == []
