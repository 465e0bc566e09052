// The lead's pair page (templates/dashboards/pair.html): keys decide and walk the queue.
// a / b / d choose keep A, keep B or drop in the decision form; a decision needs a reason, so
// the key records it at once when the reason is written, else it puts the cursor in the reason
// (Ctrl+Enter there records it). m moves to "ask one more annotator", n / p walk the queue,
// ? opens the list of keys (#keys). No key fires while the lead types in a field (Esc leaves
// the field) or while a dialog (this help, the image viewer) is open.
(function () {
  "use strict";
  const DECISIONS = { a: "keep_a", b: "keep_b", d: "drop" };
  const LINKS = { n: "queue-next", p: "queue-previous" };
  // The page's language through the JavaScript catalog (/jsi18n/, loaded before this file).
  const gettext = window.gettext || function (s) { return s; };
  const fill = (text, values) => (window.interpolate
    ? window.interpolate(text, values, true)
    : text.replace(/%\((\w+)\)s/g, (_m, name) => values[name]));

  const typing = (target) => target.closest && target.closest("input, textarea, select, [contenteditable]");
  const dialogOpen = () => document.querySelector("dialog[open]") !== null;

  function say(text) {
    const status = document.getElementById("decide-status");
    if (status) status.textContent = text;
  }

  function decide(value) {
    const form = document.getElementById("decide");
    if (!form) return;
    const select = form.elements.decision;
    select.value = value;
    const chosen = select.options[select.selectedIndex].text;
    const note = form.elements.note;
    if (note.value.trim()) {
      say(fill(gettext("%(choice)s: recording…"), { choice: chosen }));
      form.requestSubmit();
    } else {
      say(fill(gettext("%(choice)s chosen: write why, then press Ctrl+Enter to record it."), { choice: chosen }));
      note.focus();
    }
  }

  function showKeys() {
    const help = document.getElementById("keys");
    if (help && !help.open) help.showModal();
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("[data-keys-open]")) showKeys();
  });

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || dialogOpen()) return;
    const target = event.target;
    if (typing(target)) {
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && target.form && target.matches("textarea")) {
        event.preventDefault();
        target.form.requestSubmit();
      } else if (event.key === "Escape") {
        target.blur();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key === "?") {
      event.preventDefault();
      showKeys();
    } else if (DECISIONS[key]) {
      event.preventDefault();
      decide(DECISIONS[key]);
    } else if (key === "m") {
      const field = document.querySelector("#ask-annotator input[name=note]");
      if (field) {
        event.preventDefault();
        field.focus();
      }
    } else if (LINKS[key]) {
      const anchor = document.getElementById(LINKS[key]);
      if (anchor) {
        event.preventDefault();
        anchor.click();
      }
    }
  });
})();
