"""Enter to the next pair on the demo server, measured in Chromium at 1366×768.

usage: python -m bench.next_pair [--transitions 30] [--think-ms 1500] [--server runserver|gunicorn]
                                 [--runs 1] [--json]

Seeds the demo (`manage.py demo`: 4 tasks × 10 pairs, annotator1..3) into a fresh SQLite
database in a temporary folder and serves it the way `make demo` does: `manage.py runserver`
(threaded, DEBUG off, SQLite; `--server gunicorn` runs the same WSGI app under gunicorn with 4
threads instead). Server-Timing is on (ARBITER_SERVER_TIMING=1), so the report also gives the
server's own time of each submit. Debian's Chromium, headless through Playwright, logs in as
annotator1 and rates pair after pair through the four tasks: on each pair it waits
`--think-ms` (the expert looking at the pair; an expert takes far longer), presses a digit
(the overall score), then Enter.

One transition is timed in the page with performance.now(): from the Enter keydown (its
event.timeStamp, taken in a capture listener on window, before the page's own) until the
next pair is *interactive*, which is the first animation frame at which all of:
  - a new #workspace is in the DOM (its data-assignment differs from the rated one's),
  - htmx has settled it (htmx:afterSettle: htmx wires the new form then, before which Enter
    would post it without htmx, and the page's scripts have run on it),
  - every <img> of it that is inside the viewport and not clipped away by a scrolling
    ancestor (the response columns) is `complete`, has a natural size and is `decode()`d;
the time is that frame's requestAnimationFrame callback (the frame that draws it).
A submit that answers with the task's "done" page is not a transition (the next task is
started with its Start button instead). The demo mixes two gold checks into each task's queue,
as a real campaign does: the pages whose next pair is one were not preloaded (the guess
follows the queue, annotation/selectors/upcoming.py), and they count like the others.
Besides min/median/max the report gives the median of each phase (answer in, swapped and
settled, painted) and the server's own time. Exit status 1 when the median misses 150 ms.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.common import ROOT, django_env, free_port, manage

TARGET_MS = 150.0
VIEWPORT = {"width": 1366, "height": 768}
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "arbiter-demo"  # demo.seed.DEFAULT_PASSWORD
ANNOTATOR = "annotator1"
TASKS = ("t2i", "edit", "interleaved", "reasoning")  # demo.pairs.TASKS, in the home's order

# Installed in the page before anything runs; survives htmx swaps (they replace #workspace).
PROBE = """
(() => {
  const probe = window.__nextPair = { start: null, results: [] };
  window.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !document.getElementById("rating-form")) return;
    const ws = document.getElementById("workspace");
    probe.start = { t: event.timeStamp, from: ws ? ws.dataset.assignment : null, settled: false };
  }, true);
  // The phases: the answer in (htmx:beforeSwap), the new pair swapped in and settled.
  document.addEventListener("htmx:beforeSwap", () => {
    if (probe.start) probe.start.answered = performance.now();
  });
  document.addEventListener("htmx:afterSettle", () => {
    if (probe.start) { probe.start.settled = true; probe.start.swapped = performance.now(); }
  });
  // Inside the viewport and not clipped away by a scrolling ancestor (a response column).
  function visible(img) {
    const r = img.getBoundingClientRect();
    let top = Math.max(r.top, 0), left = Math.max(r.left, 0);
    let bottom = Math.min(r.bottom, innerHeight), right = Math.min(r.right, innerWidth);
    for (let el = img.parentElement; el && el !== document.body; el = el.parentElement) {
      const style = getComputedStyle(el);
      if (style.overflowX === "visible" && style.overflowY === "visible") continue;
      const c = el.getBoundingClientRect();
      top = Math.max(top, c.top); left = Math.max(left, c.left);
      bottom = Math.min(bottom, c.bottom); right = Math.min(right, c.right);
    }
    return bottom > top && right > left;
  }
  function loaded(img) {
    const ready = img.complete && img.naturalWidth > 0
      ? Promise.resolve()
      : new Promise((resolve) => {
          img.addEventListener("load", resolve, { once: true });
          img.addEventListener("error", resolve, { once: true });
        });
    return ready.then(() => img.decode().catch(() => {}));
  }
  async function watch() {
    const start = probe.start;
    if (!start) return;
    const ws = document.getElementById("workspace");
    if (!ws || !start.settled || ws.dataset.assignment === start.from) return;
    probe.start = null;
    if (!document.getElementById("rating-form")) {  // the task's end: no next pair
      probe.results.push({ done: true });
      return;
    }
    const images = Array.from(ws.querySelectorAll("img")).filter(visible);
    await Promise.all(images.map(loaded));
    requestAnimationFrame((frame) => {
      probe.results.push({
        from: start.from, to: ws.dataset.assignment, images: images.length,
        ms: performance.now() - start.t,
        answered_ms: start.answered - start.t, swapped_ms: start.swapped - start.t,
      });
    });
  }
  new MutationObserver(watch).observe(document, { childList: true, subtree: true });
  document.addEventListener("htmx:afterSettle", watch);
})();
"""


# ---------------------------------------------------------------- the demo server


def _wait_for(url: str, server: subprocess.Popen, log: Path, deadline_s: float = 60) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the server stopped:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"no answer from {url} within {deadline_s} s")


def start_demo(work: Path, server: str) -> tuple[subprocess.Popen, str, dict]:
    """A fresh demo on SQLite in `work`, served on a free port; the server, its URL and env."""
    var = work / "var"
    env = django_env(f"sqlite:///{var / 'arbiter.sqlite3'}", var)
    env["ARBITER_SERVER_TIMING"] = "1"
    port = free_port()
    host = f"127.0.0.1:{port}"
    manage(env, "init_embedded")
    manage(env, "migrate", "--noinput")
    seconds, _ = manage(env, "demo", "--host", host)
    print(f"demo seeded in {seconds:.1f} s (SQLite in {work})")
    if server == "gunicorn":
        command = [
            sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", host,
            "--workers", "1", "--threads", "4",
        ]  # fmt: skip
    else:  # what `make demo` runs (threaded); no autoreloader, which would fork a child
        command = [sys.executable, str(ROOT / "manage.py"), "runserver", "--noreload", host]
    # Its request log goes to a file: a pipe nobody reads would stop the server once full.
    log = (work / "server.log").open("wb")
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://{host}"
    _wait_for(f"{url}/accounts/login/", process, work / "server.log")
    return process, url, env


# ---------------------------------------------------------------- the browser


def _server_ms(response) -> float | None:
    timing = response.headers.get("server-timing", "")
    for item in timing.split(","):
        name, _, rest = item.strip().partition(";dur=")
        if name == "app" and rest:
            return float(rest)
    return None


def measure(base_url: str, transitions: int, think_ms: int, verbose: bool = False) -> list[dict]:
    """Rate pairs as annotator1 until `transitions` Enter-to-next-pair are timed."""
    from playwright.sync_api import sync_playwright

    samples: list[dict] = []
    server_ms: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.add_init_script(PROBE)

        def on_response(response):
            if response.request.method == "POST" and "/annotate/" in response.url:
                ms = _server_ms(response)
                if ms is not None:
                    server_ms[response.headers.get("hx-push-url", "")] = ms

        page.on("response", on_response)
        page.on("pageerror", lambda error: print(f"  page error: {error}", file=sys.stderr))
        page.goto(f"{base_url}/accounts/login/")
        page.fill("input[name=username]", ANNOTATOR)
        page.fill("input[name=password]", PASSWORD)
        page.press("input[name=password]", "Enter")
        page.wait_for_url(f"{base_url}/")
        for task in TASKS:
            page.goto(f"{base_url}/projects/demo/tasks/{task}/next/")
            page.get_by_role("button", name="Rate the next pair").click()
            page.wait_for_selector("#rating-form")
            page.wait_for_load_state("load")  # the page's scripts listen for the keys
            while len(samples) < transitions:
                page.wait_for_timeout(think_ms)  # the expert looks at the pair
                page.keyboard.press("4")
                page.wait_for_selector(
                    "#rating-form input[name=overall][value='4']:checked", state="attached"
                )
                before = len(page.evaluate("window.__nextPair.results"))
                page.keyboard.press("Enter")
                page.wait_for_function(
                    "before => window.__nextPair.results.length > before",
                    arg=before,
                    timeout=30_000,
                )
                result = page.evaluate("window.__nextPair.results")[-1]
                if result.get("done"):
                    break  # the task's end: on to the next task
                result["server_ms"] = server_ms.get(f"/annotate/{result['to']}/")
                result["task"] = task
                samples.append(result)
                if verbose:
                    print(f"  {task} {result}", flush=True)
            if len(samples) >= transitions:
                break
        browser.close()
    return samples


# ---------------------------------------------------------------- report


def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "min": round(min(values), 1),
        "median": round(statistics.median(values), 1),
        "max": round(max(values), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--transitions", type=int, default=30)
    parser.add_argument(
        "--think-ms", type=int, default=1500, help="time on each pair before scoring"
    )
    parser.add_argument("--server", choices=("runserver", "gunicorn"), default="runserver")
    parser.add_argument("--runs", type=int, default=1, help="fresh demo + browser per run")
    parser.add_argument("--verbose", action="store_true", help="print each transition")
    parser.add_argument("--json", action="store_true", help="print every sample as JSON too")
    args = parser.parse_args()

    runs = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="arbiter-bench-next-pair-") as tmp:
            server, url, _env = start_demo(Path(tmp), args.server)
            try:
                load_before = os.getloadavg()[0]
                samples = measure(url, args.transitions, args.think_ms, args.verbose)
                load_after = os.getloadavg()[0]
            finally:
                server.terminate()
                server.wait(timeout=30)
        if not samples:
            sys.exit("no transition timed")
        total = summary([s["ms"] for s in samples])
        timed = [s["server_ms"] for s in samples if s["server_ms"] is not None]
        runs.append({"total": total, "server": summary(timed) if timed else None})
        print(
            f"run {run + 1}: Enter → next pair interactive, {total['n']} transitions: "
            f"min {total['min']} ms, median {total['median']} ms, max {total['max']} ms"
        )
        answered = summary([s["answered_ms"] for s in samples])
        swapped = summary([s["swapped_ms"] for s in samples])
        print(
            f"  phases (median): answer in {answered['median']} ms, swapped and settled "
            f"{swapped['median']} ms, images decoded and painted {total['median']} ms"
        )
        runs[-1].update(answered=answered, swapped=swapped)
        if timed:
            server_row = runs[-1]["server"]
            print(
                f"  server (Server-Timing app) of the submit: min {server_row['min']} ms, "
                f"median {server_row['median']} ms, max {server_row['max']} ms"
            )
        print(
            f"  {args.server}, SQLite, {VIEWPORT['width']}×{VIEWPORT['height']}, think "
            f"{args.think_ms} ms; {os.cpu_count()} CPUs, load average {load_before:.1f} before / "
            f"{load_after:.1f} after"
        )
        if args.json:
            print(json.dumps(samples, indent=2))
    medians = [r["total"]["median"] for r in runs]
    median = statistics.median(medians)
    verdict = "OK" if median <= TARGET_MS else "MISSED"
    print(f"target median ≤ {TARGET_MS:.0f} ms: {median:.1f} ms (median of runs) {verdict}")
    return 0 if median <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
