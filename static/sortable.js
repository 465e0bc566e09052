// The headers of a table.sortable sort its rows by their column (numbers by data-value or
// their text, then text); pressed again, the order reverses. Each header's content becomes a
// button (Tab, then Enter or Space), and the sorted header says so in aria-sort.
(function () {
  "use strict";
  const HEADERS = "table.sortable thead th";

  const sortBy = (header) => {
    const table = header.closest("table");
    const column = Array.from(header.parentNode.children).indexOf(header);
    const body = table.tBodies[0];
    const descending = header.dataset.sorted !== "desc";
    table.querySelectorAll("thead th").forEach((th) => {
      delete th.dataset.sorted;
      th.removeAttribute("aria-sort");
    });
    header.dataset.sorted = descending ? "desc" : "asc";
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    const key = (row) => {
      const cell = row.children[column];
      if (!cell) return "";
      const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
      const number = parseFloat(raw);
      return Number.isNaN(number) ? raw.toLowerCase() : number;
    };
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      if (x === y) return 0;
      if (x === "" || y === "") return x === "" ? 1 : -1;
      return (x < y ? -1 : 1) * (descending ? -1 : 1);
    });
    rows.forEach((row) => body.appendChild(row));
  };

  // Wrap each header's content in a button (once: a header that has one keeps it).
  const enhance = (root) => {
    root.querySelectorAll(HEADERS).forEach((th) => {
      if (th.querySelector(":scope > button.sort") || !th.textContent.trim()) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
    });
  };

  // A click anywhere in a header sorts (the button fills most of it); Enter and Space on the
  // button arrive here as clicks too.
  document.addEventListener("click", (event) => {
    const header = event.target.closest && event.target.closest(HEADERS);
    if (header) sortBy(header);
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => enhance(document));
  } else {
    enhance(document);
  }
})();
