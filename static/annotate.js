// The annotate page: keyboard rating and active-time tracking (the image viewer is viewer.js).
// Listeners sit on `document` so they keep working after htmx swaps in the next pair.
(function () {
  "use strict";
  const IDLE_AFTER_MS = 60000; // no input for a minute: the annotator is not rating
  let activeRow = 0;
  let activeMs = 0;
  let lastTick = Date.now();
  let lastInput = Date.now();

  const ratingForm = () => document.getElementById("rating-form");
  const rows = () => {
    const form = ratingForm();
    return form ? Array.from(form.querySelectorAll(".scale-row")) : [];
  };

  function highlight(index) {
    const all = rows();
    if (!all.length) return;
    activeRow = Math.max(0, Math.min(index, all.length - 1));
    all.forEach((row, n) => row.classList.toggle("active", n === activeRow));
    all[activeRow].scrollIntoView({ block: "nearest" });
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

  function startPair() {
    activeMs = 0;
    lastTick = lastInput = Date.now();
    highlight(0);
  }

  function openDialog(id) {
    const dialog = document.getElementById(id);
    if (dialog && !dialog.open) dialog.showModal();
  }

  function openPanel(id, focusSelector) {
    const panel = document.getElementById(id);
    if (!panel) return;
    panel.open = true;
    const field = panel.querySelector(focusSelector);
    if (field) field.focus();
  }

  function score(key) {
    const row = rows()[activeRow];
    if (!row || row.disabled) return false;
    const input = row.querySelector('input[type="radio"][value="' + key + '"]');
    if (!input) return false;
    input.checked = true;
    input.dispatchEvent(new Event("change", { bubbles: true }));
    if (activeRow < rows().length - 1) highlight(activeRow + 1);
    return true;
  }

  setInterval(tick, 1000);
  for (const type of ["keydown", "mousemove", "mousedown", "wheel", "touchstart"]) {
    document.addEventListener(type, () => { lastInput = Date.now(); }, { passive: true });
  }
  document.addEventListener("visibilitychange", tick);
  document.addEventListener("DOMContentLoaded", startPair);
  document.addEventListener("htmx:afterSwap", startPair);
  // Capture phase: runs before htmx reads the form, so the time sent is current.
  document.addEventListener("submit", tick, true);

  document.addEventListener("change", (event) => {
    const row = event.target.closest && event.target.closest(".scale-row");
    const index = rows().indexOf(row);
    if (index >= 0 && index !== activeRow) {
      activeRow = index;
      rows().forEach((r, n) => r.classList.toggle("active", n === activeRow));
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.metaKey) return;
    if (document.querySelector("dialog[open]")) return; // Esc and the dialog's own keys
    const target = event.target;
    const typing = target.matches && target.matches("textarea, select, input:not([type=radio])");
    const form = ratingForm();
    if (event.key === "Enter") {
      const inRationale = target.tagName === "TEXTAREA" && target.form === form;
      if (!form || (typing && !(inRationale && event.ctrlKey))) return;
      if (target.matches && target.matches("button, summary, a")) return;
      event.preventDefault();
      form.requestSubmit();
      return;
    }
    if (typing || event.ctrlKey) return;
    const onRadio = target.matches && target.matches("input[type=radio]");
    if (/^[1-9]$/.test(event.key)) {
      if (score(event.key)) event.preventDefault();
      return;
    }
    const actions = {
      j: () => highlight(activeRow + 1),
      k: () => highlight(activeRow - 1),
      o: () => highlight(0),
      ArrowDown: () => onRadio || highlight(activeRow + 1),
      ArrowUp: () => onRadio || highlight(activeRow - 1),
      r: () => form && form.elements.rationale && form.elements.rationale.focus(),
      s: () => openPanel("skip-panel", "input[name=skip_reason]"),
      f: () => openPanel("flag-panel", "select"),
      "?": () => openDialog("shortcuts"),
    };
    if (actions[event.key]) {
      if ((event.key === "ArrowDown" || event.key === "ArrowUp") && onRadio) return;
      event.preventDefault();
      actions[event.key]();
    }
  });

  document.addEventListener("click", (event) => {
    const opener = event.target.closest && event.target.closest("[data-open]");
    if (opener) {
      openDialog(opener.dataset.open);
      return;
    }
  });
})();
