// Click a header of a table.sortable to sort its rows by that column (numbers by data-value
// or their text, then text); click again to reverse.
document.addEventListener("click", (event) => {
  const header = event.target.closest && event.target.closest("table.sortable thead th");
  if (!header) return;
  const table = header.closest("table");
  const column = Array.from(header.parentNode.children).indexOf(header);
  const body = table.tBodies[0];
  const descending = header.dataset.sorted !== "desc";
  table.querySelectorAll("thead th").forEach((th) => delete th.dataset.sorted);
  header.dataset.sorted = descending ? "desc" : "asc";
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
});
