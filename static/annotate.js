// The annotate page: the keyboard model, active-time tracking, response scrolling and the
// expert's view preferences (the image viewer is viewer.js). Listeners sit on `document` so
// they keep working after htmx swaps in the next pair.
//
// Keyboard: a digit scores the highlighted row and stays there (moving on is an opt-in under
// "View"), 0/Backspace clears it, j/k move between rows, ↑/↓ scroll the responses, z opens the
// pair's first image in the viewer. Closing the viewer or the shortcuts hands the keyboard back
// to the rating form (not to the image link or button that opened them, where Enter would open
// them again instead of submitting).
//
// Phones (arbiter.css): the dock shows the Overall scale and Submit, "More" the rest; where the
// responses stack, a horizontal swipe moves between Left and Right. The page scrolls there (to
// see the Right response above the dock): the next pair begins at the page's top, its prompt
// and both responses on the first screen, wherever the expert had scrolled the last one.
(function () {
  "use strict";
  const IDLE_AFTER_MS = 60000; // no input for a minute: the annotator is not rating
  const SCROLL_STEP = 60;
  // Words said to the expert come from the page's JavaScript catalog (/jsi18n/, loaded first);
  // English without it.
  const gettext = window.gettext || function (s) { return s; };
  const interpolate = window.interpolate || function (s, obj) { return s.replace(/%\((\w+)\)s/g, (m, k) => String(obj[k])); };
  const SWIPE_PX = 60; // a sideways move at least this long, and twice as long as it is high
  const PREFS = {
    sync: "arbiter.syncScroll", advance: "arbiter.autoAdvance", aspects: "arbiter.aspectsOpen",
    natural: "arbiter.naturalImages",
  };
  let activeRow = 0;
  let activeMs = 0;
  let lastTick = Date.now();
  let lastInput = Date.now();
  let lastScrolled = null; // the response column the expert scrolled or pointed at last
  const echoes = new WeakSet(); // columns we scrolled to mirror the other (no echo back)
  let dockOpen = false; // "More" on a phone: stays open from pair to pair until closed
  let swipe = null; // the touch that may be a swipe: where it started, on which response
  let shownPair = null; // the assignment on screen

  function pref(name, fallback) {
    try {
      const value = localStorage.getItem(PREFS[name]);
      return value === null ? fallback : value === "1";
    } catch (error) {
      return fallback; // storage disabled: defaults
    }
  }

  function setPref(name, on) {
    try { localStorage.setItem(PREFS[name], on ? "1" : "0"); } catch (error) { /* not kept */ }
  }

  const ratingForm = () => document.getElementById("rating-form");
  const rows = () => {
    const form = ratingForm();
    return form ? Array.from(form.querySelectorAll(".scale-row")) : [];
  };
  const columns = () => Array.from(document.querySelectorAll("#workspace .response-body"));

  function describe(row) {
    const legend = row.querySelector("legend");
    const name = legend ? legend.textContent.replace("*", "").trim() : gettext("Row");
    const checked = row.querySelector("input[type=radio]:checked");
    const value = checked ? checked.value + " · " + checked.dataset.label : gettext("not set");
    const said = row.disabled ? gettext("%(row)s: %(value)s") : gettext("%(row)s: %(value)s (keys 1–%(count)s, 0 clears)");
    return interpolate(said, { row: name, value: value, count: row.querySelectorAll("input[type=radio]").length }, true);
  }

  function announce() {
    const status = document.getElementById("row-status");
    const row = rows()[activeRow];
    if (status && row) status.textContent = describe(row);
  }

  function highlight(index) {
    const all = rows();
    if (!all.length) return;
    activeRow = Math.max(0, Math.min(index, all.length - 1));
    all.forEach((row, n) => {
      row.classList.toggle("active", n === activeRow);
      if (n === activeRow) row.setAttribute("aria-current", "true");
      else row.removeAttribute("aria-current");
    });
    const strip = all[activeRow].closest("details");
    if (strip && !strip.open) strip.open = true; // j into the aspects opens their strip
    if (strip) setDock(true);
    announce();
  }

  function tick() {
    const now = Date.now();
    if (!document.hidden && now - lastInput < IDLE_AFTER_MS) activeMs += now - lastTick;
    lastTick = now;
    const form = ratingForm();
    if (form && form.elements.active_seconds) {
      form.elements.active_seconds.value = (activeMs / 1000).toFixed(1);
    }
  }

  // Set on <html> (it outlives htmx's swaps), as soon as this script runs: no fitted first paint.
  function applyImagesPref() {
    const natural = pref("natural", false);
    document.documentElement.classList.toggle("natural-images", natural);
    const select = document.getElementById("pref-images");
    if (select) select.value = natural ? "natural" : "fit";
  }

  function setDock(open) {
    dockOpen = open;
    const dock = document.querySelector("#workspace .dock");
    const button = document.querySelector("#workspace .dock-more");
    if (dock) {
      dock.classList.toggle("open", open);
      dock.classList.toggle("closed", !open);
    }
    if (button) button.setAttribute("aria-expanded", String(open));
  }

  function applyPrefs() {
    const sync = document.getElementById("pref-sync");
    const advance = document.getElementById("pref-advance");
    if (sync) sync.checked = pref("sync", false);
    if (advance) advance.checked = pref("advance", false);
    applyImagesPref();
    setDock(dockOpen);
    const strip = document.getElementById("aspects-strip");
    if (strip) strip.open = pref("aspects", window.innerWidth >= 900);
  }

  function startPair() {
    const workspace = document.getElementById("workspace");
    const pair = workspace ? workspace.dataset.assignment : null;
    if (shownPair !== null && pair !== shownPair && window.scrollY > 0) {
      window.scrollTo({ top: 0, behavior: "instant" });
    }
    shownPair = pair;
    activeMs = 0;
    lastTick = lastInput = Date.now();
    lastScrolled = null;
    applyPrefs();
    highlight(0);
    // Say what happened (saved, skipped, flagged) through the page's lasting live region.
    const toast = document.querySelector("#workspace .toast");
    const announcer = document.getElementById("announcer");
    if (announcer && toast) announcer.textContent = toast.textContent.trim();
  }

  function openDialog(id) {
    const dialog = document.getElementById(id);
    if (!dialog || dialog.open) return;
    focusRating(); // what the dialog gives the focus back to when it closes (see focusRating)
    dialog.showModal();
  }

  // Take back the last skip or flag, when the page offers it (its Undo form).
  function undoLast() {
    const undo = document.querySelector("#workspace form.undo");
    if (undo) undo.requestSubmit();
  }

  function openPanel(id, focusSelector) {
    const panel = document.getElementById(id);
    if (!panel) return;
    setDock(true); // on a phone it is behind "More"
    panel.open = true;
    const field = panel.querySelector(focusSelector);
    if (field) field.focus();
  }

  // The rating form takes the focus (not a row: arrows would change its score), so digits
  // rate the highlighted row, Enter submits and Tab goes on to the scale. Called before a
  // dialog opens too: a closing dialog gives the focus back to what had it, at once, while the
  // `close` event comes a task later, when a fast Enter may already have gone elsewhere.
  function focusRating() {
    const form = ratingForm();
    if (!form) return false;
    if (!form.hasAttribute("tabindex")) form.tabIndex = -1;
    form.focus({ preventScroll: true });
    announce();
    return true;
  }

  // The first image of the pair in reading order (the prompt's, then Left's, then Right's),
  // opened by a click on its link as the expert would (viewer.js).
  function openFirstImage() {
    const first = ["#workspace .prompt", "#left", "#right"]
      .map((scope) => document.querySelector(scope + " a.zoomable"))
      .find(Boolean);
    if (first) first.click();
  }

  function score(key) {
    const row = rows()[activeRow];
    if (!row || row.disabled) return false;
    const input = row.querySelector('input[type="radio"][value="' + key + '"]');
    if (!input) return false;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    if (pref("advance", false) && activeRow < rows().length - 1) highlight(activeRow + 1);
    else announce();
    return true;
  }

  function clearRow() {
    const row = rows()[activeRow];
    if (!row || row.disabled) return;
    row.querySelectorAll("input[type=radio]").forEach((input) => { input.checked = false; });
    announce();
  }

  // ↑/↓ with nothing focused scroll the responses (the page itself does not scroll when the
  // workspace fills the window); with "scroll together" the other column follows.
  function scrollResponses(step) {
    const all = columns().filter((column) => column.scrollHeight > column.clientHeight);
    if (!all.length) return false;
    // The column the expert last pointed at or scrolled; both when they have not chosen yet
    // (with "scroll together", scrolling one moves the other: see mirror).
    const targets = all.includes(lastScrolled) ? [lastScrolled] : all;
    targets.forEach((column) => {
      echoes.add(column); // our own scroll: it does not change the expert's column
      column.scrollBy({ top: step, behavior: "instant" });
    });
    if (targets.length === 1) mirror(targets[0]);
    return true;
  }

  function mirror(source) {
    if (!pref("sync", false)) return;
    const range = source.scrollHeight - source.clientHeight;
    const ratio = range > 0 ? source.scrollTop / range : 0;
    columns().filter((column) => column !== source).forEach((column) => {
      const top = Math.round(ratio * (column.scrollHeight - column.clientHeight));
      if (Math.abs(column.scrollTop - top) < 1) return;
      echoes.add(column);
      column.scrollTop = top;
    });
  }

  // Stacked responses (a phone): Left above Right.
  function stacked() {
    const [left, right] = ["left", "right"].map((id) => document.getElementById(id));
    return Boolean(left && right) && right.getBoundingClientRect().top >= left.getBoundingClientRect().bottom - 1;
  }

  // A swipe brings the other response to the top of the window and gives it the keys (↑/↓).
  function showResponse(id) {
    const card = document.getElementById(id);
    if (!card) return;
    const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    card.scrollIntoView({ block: "start", behavior: still ? "instant" : "smooth" });
    document.querySelectorAll("#workspace .response").forEach((other) => other.classList.toggle("current", other === card));
    const body = card.querySelector(".response-body");
    if (body) {
      body.focus({ preventScroll: true });
      lastScrolled = body;
    }
  }

  applyImagesPref();
  setDock(false); // before the first paint, as the script ends the page
  setInterval(tick, 1000);
  for (const type of ["keydown", "mousemove", "mousedown", "wheel", "touchstart"]) {
    document.addEventListener(type, () => { lastInput = Date.now(); }, { passive: true });
  }
  document.addEventListener("visibilitychange", tick);
  document.addEventListener("DOMContentLoaded", startPair);
  document.addEventListener("htmx:afterSwap", startPair);
  // Capture phase: runs before htmx reads the form, so the time sent is current.
  document.addEventListener("submit", tick, true);

  document.addEventListener("scroll", (event) => {
    const column = event.target;
    if (!(column instanceof Element) || !column.classList.contains("response-body")) return;
    if (echoes.has(column)) { echoes.delete(column); return; }
    lastScrolled = column;
    mirror(column);
  }, true);
  document.addEventListener("pointerover", (event) => {
    const column = event.target.closest && event.target.closest(".response-body");
    if (column) lastScrolled = column;
  });

  document.addEventListener("change", (event) => {
    const target = event.target;
    if (target.id === "pref-images") {
      setPref("natural", target.value === "natural");
      applyImagesPref();
      return;
    }
    if (target.id === "pref-sync" || target.id === "pref-advance") {
      setPref(target.id === "pref-sync" ? "sync" : "advance", target.checked);
      return;
    }
    const row = target.closest && target.closest(".scale-row");
    const index = rows().indexOf(row);
    if (index >= 0 && index !== activeRow) highlight(index);
    else if (index >= 0) announce();
  });
  document.addEventListener("focusin", (event) => {
    const row = event.target.closest && event.target.closest("#rating-form .scale-row");
    const index = rows().indexOf(row);
    if (index >= 0 && index !== activeRow) highlight(index);
  });
  // The viewer opens on a click on an image (or z, which clicks the first): the focus goes to
  // the form first (capture phase, before viewer.js opens it), then comes back there on close.
  document.addEventListener("click", (event) => {
    const image = event.target.closest && event.target.closest("a.zoomable");
    if (image && !(event.ctrlKey || event.metaKey || event.shiftKey || event.button)) focusRating();
  }, true);
  // The viewer would put the focus back on the image; the browser has already given it back to
  // the form. This comes a task after the close: a key pressed since (s, r) keeps its field.
  document.addEventListener("viewer:closed", (event) => {
    if (!ratingForm()) return;
    event.preventDefault();
    if (!document.activeElement || document.activeElement === document.body) focusRating();
  });
  // A question sent (threads.js): the keys go back to the rating.
  document.addEventListener("thread:sent", () => { focusRating(); });
  document.addEventListener("toggle", (event) => {
    // A menu or panel that closes hands the keyboard back to the rating (Enter submits).
    const closed = event.target;
    if (closed.matches && closed.matches("details.menu, details.popover") && !closed.open &&
        closed.contains(document.activeElement)) {
      document.activeElement.blur();
    }
    // Only the expert's own clicks on the strip are remembered (not j opening it).
    if (event.target.id === "aspects-strip" && event.isTrusted && document.activeElement &&
        document.activeElement.closest && document.activeElement.closest("#aspects-strip > summary")) {
      setPref("aspects", event.target.open);
    }
  }, true);

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.metaKey) return;
    if (document.querySelector("dialog[open]")) return; // Esc and the dialog's own keys
    const target = event.target;
    const typing = target.matches && target.matches("textarea, select, input:not([type=radio]):not([type=checkbox])");
    const form = ratingForm();
    if (event.key === "Enter") {
      if (target.matches && target.matches("button, summary, a")) return;
      // Enter in the skip or flag panel submits that panel's form, never the rating.
      const own = target.form || (target.closest && target.closest("form"));
      if (own && own !== form) {
        if (target.tagName === "TEXTAREA") return;
        event.preventDefault();
        own.requestSubmit();
        return;
      }
      const inRationale = target.tagName === "TEXTAREA" && target.form === form;
      if (!form || (typing && !(inRationale && event.ctrlKey))) return;
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    const panel = target.closest && target.closest("details.popover, details.menu");
    // Esc leaves a text field (the rationale, a note, a question): its panel closes, what was
    // typed stays, and the keys rate again (digits score, Enter submits).
    if (typing && event.key === "Escape") {
      event.preventDefault();
      if (panel && panel.open) panel.open = false;
      target.blur();
      focusRating();
      return;
    }
    if (typing || event.ctrlKey) return;
    if (panel && panel.open) {
      if (event.key === "Escape") { // close it and give the keys back to the rating
        panel.open = false;
        event.preventDefault();
      }
      return; // its own radios and keys
    }
    if (/^[1-9]$/.test(event.key)) {
      if (score(event.key)) event.preventDefault();
      return;
    }
    const onRadio = target.matches && target.matches("input[type=radio]");
    const onPage = !onRadio && !(target.closest && target.closest(".response-body, textarea"));
    const actions = {
      0: clearRow,
      Backspace: clearRow,
      Delete: clearRow,
      j: () => highlight(activeRow + 1),
      k: () => highlight(activeRow - 1),
      o: () => highlight(0),
      r: () => { setDock(true); if (form && form.elements.rationale) form.elements.rationale.focus(); },
      s: () => openPanel("skip-panel", "input[name=skip_reason]:checked"),
      f: () => openPanel("flag-panel", "input[name=flag_note]"), // the reason has a default
      u: undoLast,
      z: openFirstImage,
      "?": () => openDialog("shortcuts"),
    };
    if ((event.key === "ArrowDown" || event.key === "ArrowUp") && onPage) {
      const pageScrolls = document.documentElement.scrollHeight > window.innerHeight + 1;
      if (!pageScrolls && scrollResponses(event.key === "ArrowDown" ? SCROLL_STEP : -SCROLL_STEP)) {
        event.preventDefault();
      }
      return;
    }
    if (actions[event.key]) {
      event.preventDefault();
      actions[event.key]();
    }
  });

  document.addEventListener("click", (event) => {
    const opener = event.target.closest && event.target.closest("[data-open]");
    if (opener) openDialog(opener.dataset.open);
    if (event.target.closest && event.target.closest("#workspace .dock-more")) {
      setDock(!dockOpen);
      const strip = document.getElementById("aspects-strip");
      if (dockOpen && strip) strip.open = true; // "More" is there for the aspects first
    }
  });

  // Swipes: touch and pen only (a mouse drag selects text). Sideways moves are ours where the
  // responses stack (touch-action: pan-y in arbiter.css); up and down still scroll.
  document.addEventListener("pointerdown", (event) => {
    const card = event.target.closest && event.target.closest("#workspace .response");
    swipe = card && event.isPrimary && event.pointerType !== "mouse" && stacked()
      ? { id: event.pointerId, x: event.clientX, y: event.clientY, from: card.id } : null;
  });
  document.addEventListener("pointercancel", () => { swipe = null; });
  document.addEventListener("pointerup", (event) => {
    if (!swipe || event.pointerId !== swipe.id) return;
    const dx = event.clientX - swipe.x;
    const dy = event.clientY - swipe.y;
    const from = swipe.from;
    swipe = null;
    if (Math.abs(dx) < SWIPE_PX || Math.abs(dx) < 2 * Math.abs(dy)) return;
    const to = dx < 0 ? "right" : "left"; // the finger moves left: the next one, Right
    if (to !== from) showResponse(to);
  });
})();
