"""When a page in the browser tests has settled: loaded, and no request its scripts started
(htmx, fetch) still running.

Playwright's "networkidle" waits for half a second without traffic after every page, which
made the browser tests spend a third of their time waiting. Instead, every page the shared
Chromium opens (tests/conftest.py) counts the XMLHttpRequests and fetches in flight, and
`settled(page)` waits for the load event and a count of zero. htmx swaps a reply in before the
request's `loadend`, so the requests a swap starts are counted before the one that brought it
ends. The requests a page starts later on its own (a poll every few seconds, the preload of
the next pair once the browser is idle) are not waited for, as they were not before either
unless they happened to start within the half second.

    from tests.settling import settled

    page.goto(url)
    settled(page)
"""

# Run before any script of the page (Playwright's init script; the pages' Content-Security-
# Policy does not govern it).
COUNT_REQUESTS = """(() => {
  let inFlight = 0;
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    inFlight += 1;
    this.addEventListener("loadend", () => { inFlight -= 1; }, { once: true });
    return send.apply(this, args);
  };
  const originalFetch = window.fetch;
  window.fetch = function (...args) {
    inFlight += 1;
    return originalFetch.apply(this, args).finally(() => { inFlight -= 1; });
  };
  Object.defineProperty(window, "__requestsInFlight", { get: () => inFlight });
})();"""

IDLE = "() => document.readyState === 'complete' && (window.__requestsInFlight ?? 0) === 0"


def settled(page, timeout_ms: float = 30_000):
    """Wait until the open page has loaded and its scripts' requests have all ended."""
    page.wait_for_load_state("load", timeout=timeout_ms)
    page.wait_for_function(IDLE, timeout=timeout_ms)
    return page


def counting_requests(browser):
    """Make every context and page `browser` opens from now on count its requests."""
    if getattr(browser, "_counts_requests", False):
        return browser
    new_context, new_page = browser.new_context, browser.new_page

    def context_counting(*args, **options):
        context = new_context(*args, **options)
        context.add_init_script(COUNT_REQUESTS)
        return context

    def page_counting(*args, **options):
        page = new_page(*args, **options)
        page.add_init_script(COUNT_REQUESTS)
        return page

    browser.new_context, browser.new_page = context_counting, page_counting
    browser._counts_requests = True
    return browser
