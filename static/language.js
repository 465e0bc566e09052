// The header's language switch (base.html): choosing a language sends its form at once, so the
// button is only for pages without scripts; it is hidden once this runs.
(function () {
  "use strict";
  document.querySelectorAll("[data-language-submit]").forEach(function (button) {
    button.hidden = true;
  });
  // Delegated: the switch works in whatever page htmx has swapped in.
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches("select[data-language-choice]")) return;
    if (select.form) select.form.requestSubmit();
  });
})();
