// The pair browser and the disagreement queue: one box ticks or unticks every pair of the page
// (shown only with JS); keys move between the rows of a table marked data-row-keys (j/k or the
// arrows), Enter opens the row's pair, x ticks it. Keys typed into a field, or with Ctrl, Alt
// or Meta, are left alone.
(function () {
  "use strict";
  const all = document.getElementById("pairs-all");
  if (all) {
    const boxes = () => document.querySelectorAll("#pairs-bulk tbody input[name=pair]");
    all.hidden = false;
    all.addEventListener("change", () => {
      boxes().forEach((box) => { box.checked = all.checked; });
    });
  }

  const table = document.querySelector("table[data-row-keys]");
  if (!table) return;
  const rows = Array.from(table.tBodies[0].rows).filter((row) => row.querySelector("[data-row-open]"));
  if (!rows.length) return;
  const hint = document.getElementById("pairs-keys");
  if (hint) hint.hidden = false;
  let current = -1;

  function move(to) {
    if (current >= 0) rows[current].removeAttribute("data-row-current");
    current = Math.max(0, Math.min(rows.length - 1, to));
    const row = rows[current];
    row.setAttribute("data-row-current", "");
    row.tabIndex = -1;
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }

  function typing(target) {
    if (!(target instanceof Element)) return false;
    if (target.isContentEditable) return true;
    if (target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
    return target.tagName === "INPUT" && !["checkbox", "radio", "button", "submit"].includes(target.type);
  }

  // A click in a row makes it the current one, so the keys go on from there.
  table.addEventListener("click", (event) => {
    const at = rows.indexOf(event.target.closest("tr"));
    if (at >= 0 && at !== current) {
      if (current >= 0) rows[current].removeAttribute("data-row-current");
      current = at;
      rows[at].setAttribute("data-row-current", "");
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return;
    if (typing(event.target)) return;
    const inTable = table.contains(event.target);
    const key = event.key;
    if (key === "j" || (key === "ArrowDown" && inTable)) {
      move(current + 1);
    } else if (key === "k" || (key === "ArrowUp" && inTable)) {
      move(current < 0 ? 0 : current - 1);
    } else if (key === "Enter" && current >= 0 && event.target === rows[current]) {
      rows[current].querySelector("[data-row-open]").click();
    } else if (key === "x" && current >= 0) {
      const box = rows[current].querySelector("input[name=pair]");
      if (!box) return;
      box.checked = !box.checked;
    } else {
      return;
    }
    event.preventDefault();
  });
})();
