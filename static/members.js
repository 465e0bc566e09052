// The members page: a Copy button beside the new invitation link (without JavaScript the
// button stays hidden and the link is selected by hand).
(function () {
  "use strict";
  var gettext = window.gettext || function (s) { return s; }; // English without the catalog
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    button.hidden = false;
    field.addEventListener("focus", function () { field.select(); });
    button.addEventListener("click", function () {
      var done = function () {
        button.textContent = gettext("Copied");
        window.setTimeout(function () { button.textContent = gettext("Copy"); }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          field.select();
        });
      } else {
        field.select();
        try { if (document.execCommand("copy")) done(); } catch (e) { /* selected: copy by hand */ }
      }
    });
  });
})();
