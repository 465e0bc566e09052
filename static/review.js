// The lead's pair page: n and p walk the disagreement queue (not while typing in a field).
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
  const link = { n: "queue-next", p: "queue-previous" }[event.key];
  const anchor = link && document.getElementById(link);
  if (anchor) {
    event.preventDefault();
    anchor.click();
  }
});
