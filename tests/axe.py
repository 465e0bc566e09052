"""axe-core in the browser tests: `serious_violations(page)` lists what to fix on a page.

    from tests.axe import serious_violations

    page.goto(url)
    assert serious_violations(page) == []

The vendored static/vendor/axe-core-<version>.min.js is injected into the page that is open
(never served to users' pages). The pages' Content-Security-Policy (core/csp.py) forbids
inline scripts, so `page.add_script_tag(content=...)` would be blocked; `page.evaluate`
runs the source through the DevTools protocol, which the CSP does not govern.
"""

from functools import cache
from pathlib import Path

VENDOR = Path(__file__).resolve().parents[1] / "static" / "vendor"
IMPACTS = ("serious", "critical")
ALL_IMPACTS = ("minor", "moderate", "serious", "critical")


@cache
def axe_source() -> str:
    """The text of the vendored axe.min.js (exactly one version is vendored)."""
    (path,) = sorted(VENDOR.glob("axe-core-*.min.js"))
    return path.read_text(encoding="utf-8")


def axe_results(page, context=None, options=None) -> dict:
    """axe.run's raw results for the open page (injecting axe first if the page has none).

    `context` is axe's context (a selector, or {"include": [...], "exclude": [...]});
    None checks the whole document. `options` go to axe.run as they are; by default the
    WCAG 2.x A/AA rules plus axe's best practices run.
    """
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe_source())
    return page.evaluate(
        """([context, options]) => axe.run(context || document, options || {})""",
        [context, options or {"resultTypes": ["violations"]}],
    )


def serious_violations(page, context=None) -> list[str]:
    """One readable line per serious or critical axe violation on the open page, e.g.

        "aria-progressbar-name (serious): ARIA progressbar nodes must have an accessible
         name; at .bar: Fix any of the following: aria-label attribute does not exist or is
         empty ... https://dequeuniversity.com/rules/axe/4.14/aria-progressbar-name?..."

    An empty list means axe found nothing serious: `assert serious_violations(page) == []`.
    Run it once the page has settled (e.g. after an htmx swap has landed): axe checks the
    DOM as it is, at the page's current viewport size. `context` limits the check to part of
    the page: a selector, or {"include": [...], "exclude": [...]}.
    """
    return violations(page, IMPACTS, context)


def violations(page, impacts=ALL_IMPACTS, context=None) -> list[str]:
    """Like serious_violations, for the violations of the given impacts (by default all:
    minor, moderate, serious, critical)."""
    lines = []
    for violation in axe_results(page, context)["violations"]:
        for node in violation["nodes"]:
            impact = node.get("impact") or violation.get("impact")
            if impact not in impacts:
                continue
            target = " ".join(str(part) for part in node["target"])
            summary = " ".join(node.get("failureSummary", "").split())
            lines.append(
                f"{violation['id']} ({impact}): {violation['help']}; at {target}: "
                f"{summary} {violation['helpUrl']}"
            )
    return lines
