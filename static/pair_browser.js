// The pair browser: one box ticks or unticks every pair of the page (shown only with JS).
(function () {
  "use strict";
  const all = document.getElementById("pairs-all");
  if (!all) return;
  const boxes = () => document.querySelectorAll("#pairs-bulk tbody input[name=pair]");
  all.hidden = false;
  all.addEventListener("change", () => {
    boxes().forEach((box) => { box.checked = all.checked; });
  });
})();
