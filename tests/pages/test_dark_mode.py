"""Dark mode. arbiter.css takes its colours from custom properties: a dark palette
when the system prefers dark and the user did not choose light, or when the user chose dark.
The header's theme switch (a labelled <select>: system, light, dark) keeps the choice per
browser (static/theme.js, localStorage) and applies it before the first paint.

Without a browser: the two copies of the dark palette agree, both palettes set the same
colours, and every text colour passes WCAG AA on the backgrounds it is drawn on. In Chromium
(dark and light system schemes, English and Chinese): axe-core finds nothing serious or
critical, and the console no error, on any page of a lead, an annotator, the operator or a
visitor signed out, in every state tests/pages/walks.py brings it to (menus, panels and
dialogs open, forms refused, error pages), each page really drawn in the scheme's colours and
the language asked for (the API's third-party documentation aside); choosing light by keyboard
overrides a dark system and survives a reload, a new tab and another page; choosing dark does
the same on a light system."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

from tests.axe import serious_violations
from tests.conftest import watch_errors
from tests.pages.browsing import DESKTOP, PASSWORD, WAIT_MS, open_settled
from tests.pages.walks import API_DOCS, WALKS
from tests.settling import settled

CSS = (Path(__file__).resolve().parents[2] / "static" / "arbiter.css").read_text(encoding="utf-8")
SCHEMES = ["light", "dark"]
KEY = "arbiter.theme"  # static/theme.js


# --- The palettes, read from the stylesheet ---------------------------------------------------


def _declarations(body: str) -> dict[str, str]:
    return {
        name: " ".join(value.split())
        for name, value in re.findall(r"(--[\w-]+|color-scheme):\s*([^;]+);", body)
    }


def _block(selector: str, text: str = CSS) -> dict[str, str]:
    (body,) = re.findall(re.escape(selector) + r"\s*\{([^}]*)\}", text)
    return _declarations(body)


def light_palette() -> dict[str, str]:
    """The top-level `:root { ... }` rules, merged."""
    palette = {}
    for body in re.findall(r"^:root\s*\{([^}]*)\}", CSS, re.MULTILINE):
        palette.update(_declarations(body))
    return palette


def dark_palette_of_the_system() -> dict[str, str]:
    (media,) = re.findall(r"@media \(prefers-color-scheme: dark\)\s*\{(.*?\})\s*\}", CSS, re.S)
    return _block(":root:not([data-theme=light])", media)


def dark_palette_chosen() -> dict[str, str]:
    return _block(":root[data-theme=dark]")


def palette(theme: str) -> dict[str, str]:
    """The custom properties in force in `theme`: the dark ones over the light ones."""
    return light_palette() | (dark_palette_chosen() if theme == "dark" else {})


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of #rgb or #rrggbb."""
    hex_digits = colour.lstrip("#")
    if len(hex_digits) == 3:
        hex_digits = "".join(digit * 2 for digit in hex_digits)
    channels = [int(hex_digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(first: str, second: str) -> float:
    high, low = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# (text, background) as the stylesheet draws them: body and muted text, links and the accent
# on cards and the page, text on accent and danger fills (buttons, the chosen point, the bell's
# badge), errors, messages, notices, feedback, the disabled chosen point, the toast.
TEXT_ON_BACKGROUND = [
    ("--ink", "--bg"), ("--ink", "--surface"), ("--muted", "--surface"), ("--muted", "--bg"),
    ("--accent", "--surface"), ("--accent", "--bg"), ("--accent", "--tint"),
    ("--accent", "--info-bg"), ("--on-accent", "--accent"), ("--on-accent", "--danger"),
    ("--danger", "--surface"), ("--danger", "--bg"), ("--danger", "--danger-bg"),
    ("--ink", "--tint"), ("--muted", "--tint"), ("--ink", "--info-bg"), ("--ink", "--danger-bg"),
    ("--ink", "--notice-bg"), ("--ink", "--selected-muted"), ("--surface", "--ink"),
]  # fmt: skip


def test_the_dark_palette_is_the_same_whether_the_system_or_the_user_chose_it():
    assert dark_palette_of_the_system() == dark_palette_chosen()


def test_the_dark_palette_sets_every_colour_of_the_light_one_and_the_browsers_scheme():
    light, dark = light_palette(), dark_palette_chosen()
    assert set(dark) == set(light)
    assert light["color-scheme"] == "light" and dark["color-scheme"] == "dark"


def test_every_custom_property_the_stylesheet_reads_is_defined():
    read = set(re.findall(r"var\((--[\w-]+)", CSS))
    assert read - set(light_palette()) == set()


@pytest.mark.parametrize("theme", SCHEMES)
def test_every_text_colour_passes_wcag_aa_on_its_backgrounds(theme):
    colours = palette(theme)
    too_faint = {
        f"{text} on {background}": round(contrast(colours[text], colours[background]), 2)
        for text, background in TEXT_ON_BACKGROUND
        if contrast(colours[text], colours[background]) < 4.5
    }
    assert too_faint == {}


@pytest.mark.django_db
def test_the_theme_script_is_a_blocking_script_of_the_head_and_the_switch_is_labelled(client):
    html = client.get(reverse("login")).content.decode()
    head = html[: html.index("</head>")]
    (tag,) = re.findall(r"<script[^>]*theme\.js[^>]*>", head)
    assert "defer" not in tag and "async" not in tag and "module" not in tag
    assert head.index("arbiter.css") < head.index("theme.js")
    assert '<label for="theme-choice">Theme</label>' in html
    switch = re.search(r'<select id="theme-choice"[^>]*>(.*?)</select>', html, re.S)
    assert re.findall(r'<option value="(\w+)">', switch.group(1)) == ["system", "light", "dark"]


# --- In Chromium -------------------------------------------------------------------------------

# The relative luminance of the body's computed background and text colours.
LUMINANCE = """property => {
    const channels = getComputedStyle(document.body)[property].match(/[\\d.]+/g).slice(0, 3);
    const [r, g, b] = channels.map(Number).map(c => c / 255)
        .map(c => c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""


def drawn_in(page) -> str:
    """The theme the page really draws, "dark" or "light", from its body's colours."""
    background = page.evaluate(LUMINANCE, "backgroundColor")
    text = page.evaluate(LUMINANCE, "color")
    if background < 0.05 and text > 0.6:
        return "dark"
    assert background > 0.8 and text < 0.05, (background, text)
    return "light"


def log_in(browser, base_url: str, user, color_scheme: str, viewport=DESKTOP, locale="en-US"):
    """A page signed in as `user` in a new context whose system prefers `color_scheme` and
    whose browser asks for pages in `locale` (Accept-Language)."""
    user.set_password(PASSWORD)
    user.save()
    context = browser.new_context(viewport=viewport, color_scheme=color_scheme, locale=locale)
    page = watch_errors(context.new_page())
    page.goto(base_url + reverse("login"))
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(base_url + "/", timeout=WAIT_MS)
    return page


def choose_by_keyboard(page, choice: str) -> None:
    """Tab to the header's switch and pick `choice` with the arrow keys."""
    switch = page.get_by_label("Theme")
    order = ["system", "light", "dark"]
    page.locator("a.brand").focus()
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "theme-choice":
            break
    assert page.evaluate("document.activeElement.id") == "theme-choice"
    steps = order.index(choice) - order.index(switch.input_value())
    for _ in range(abs(steps)):
        page.keyboard.press("ArrowDown" if steps > 0 else "ArrowUp")
    assert switch.input_value() == choice


def stored_choice(page):
    return page.evaluate(f"localStorage.getItem('{KEY}')")


def report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{name}:\n  " + "\n  ".join(lines) for name, lines in found.items())


# A page's own error status (the error pages and the refusals swept on purpose) is no error of
# its scripts: Chromium logs it as a failed resource at the page's address.
DOCUMENT_STATUS = re.compile(r"Failed to load resource: the server responded with a status of [45]")


# Each page in each scheme and in each language, not in every pairing of the two: the scheme
# changes only colours (the same in either language), the language only words (the same
# in either scheme), and a sweep of every page costs a minute.
SWEEPS = [("en-US", "light"), ("zh-CN", "dark")]  # English, Simplified Chinese (i18n)


def signed_out(browser, color_scheme: str, locale: str):
    context = browser.new_context(viewport=DESKTOP, color_scheme=color_scheme, locale=locale)
    return watch_errors(context.new_page())


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", list(WALKS))
@pytest.mark.parametrize(("locale", "scheme"), SWEEPS)
def test_axe_finds_nothing_serious_on_any_page_of_any_role_in_either_scheme_and_language(
    every_role, live_server, chromium_browser, role, scheme, locale
):
    """Every page of tests/pages/walks.py, in every state it walks through, for the role."""
    # `every_role` first: its judge runs use asyncio, which cannot start inside Playwright's loop.
    user = {"lead": every_role.lead, "annotator": every_role.annotator,
            "operator": every_role.operator}.get(role)  # fmt: skip
    if user is None:
        page = signed_out(chromium_browser, scheme, locale)
    else:
        page = log_in(chromium_browser, live_server.url, user, scheme, locale=locale)
    found, drawn, console, seen = {}, {}, {}, 0
    for name in WALKS[role](page, live_server.url, every_role):
        if not name.startswith(API_DOCS):
            lang = page.get_attribute("html", "lang")
            assert lang == ("en" if locale == "en-US" else "zh-hans"), name
            drawn[name] = drawn_in(page)
        lines = serious_violations(page)
        if lines:
            found[name] = lines
        errors = [
            error
            for error in page.console_errors[seen:]
            if not (DOCUMENT_STATUS.match(error) and f"'url': '{page.url}'" in error)
        ]
        seen = len(page.console_errors)
        if errors:
            console[name] = errors
    assert found == {}, report(found)
    assert {name for name, theme in drawn.items() if theme != scheme} == set()
    assert console == {}, report(console)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_choosing_light_overrides_a_dark_system_and_is_remembered(
    rated, live_server, chromium_browser
):
    project, lead = rated
    page = log_in(chromium_browser, live_server.url, lead, "dark")
    overview = live_server.url + reverse("dash-overview", args=[project.slug])
    open_settled(page, overview)
    assert drawn_in(page) == "dark"
    choose_by_keyboard(page, "light")
    assert page.get_attribute("html", "data-theme") == "light"
    assert drawn_in(page) == "light"
    assert stored_choice(page) == "light"
    # Remembered: after a reload, on another page, in another tab of the same browser.
    page.reload()
    settled(page)
    assert drawn_in(page) == "light"
    assert page.get_by_label("Theme").input_value() == "light"
    assert serious_violations(page) == [], report({"overview": serious_violations(page)})
    open_settled(page, live_server.url + reverse("dash-agreement", args=[project.slug]))
    assert drawn_in(page) == "light"
    other_tab = watch_errors(page.context.new_page())
    open_settled(other_tab, overview)
    assert drawn_in(other_tab) == "light"
    # Back to the system: the choice is forgotten, the page is dark again.
    choose_by_keyboard(page, "system")
    assert page.evaluate("document.documentElement.hasAttribute('data-theme')") is False
    assert stored_choice(page) is None
    assert drawn_in(page) == "dark"
    other_tab.wait_for_function("!document.documentElement.hasAttribute('data-theme')")
    assert drawn_in(other_tab) == "dark"  # the other tab follows
    assert page.console_errors == [] and other_tab.console_errors == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_choosing_dark_on_a_light_system_before_logging_in_is_remembered(
    live_server, chromium_browser
):
    context = chromium_browser.new_context(viewport=DESKTOP, color_scheme="light")
    page = watch_errors(context.new_page())
    open_settled(page, live_server.url + reverse("login"))
    assert drawn_in(page) == "light"
    choose_by_keyboard(page, "dark")
    assert drawn_in(page) == "dark"
    page.reload()
    settled(page)
    assert page.get_attribute("html", "data-theme") == "dark"
    assert drawn_in(page) == "dark"
    assert serious_violations(page) == [], report({"login": serious_violations(page)})
    assert page.console_errors == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_switch_shares_the_brands_line_on_a_360_pixel_phone(
    annotator, live_server, chromium_browser
):
    phone = {"width": 360, "height": 740}
    page = log_in(chromium_browser, live_server.url, annotator, "dark", phone)
    scroll_width, inner_width = page.evaluate(
        "[document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert scroll_width <= inner_width
    box = page.get_by_label("Theme").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= inner_width
    brand = page.locator("a.brand").bounding_box()  # on the brand's line: no extra row
    assert box["y"] < brand["y"] + brand["height"] and brand["y"] < box["y"] + box["height"]
    assert page.console_errors == []
