// The colour theme. arbiter.css draws the dark palette when <html data-theme="dark">,
// or when the system prefers dark and the attribute is not "light"; without the attribute the
// page follows the system. The header's switch (base.html) chooses light, dark or the system;
// the choice is kept per browser in localStorage. Loaded in <head> without defer, so the
// attribute is set before the first paint: no flash of the other theme (the CSP forbids the
// usual inline script).
(function () {
  "use strict";
  var KEY = "arbiter.theme";
  var SWITCH = "select[data-theme-choice]";
  var root = document.documentElement;

  function chosen() {
    try {
      var value = window.localStorage.getItem(KEY);
      return value === "light" || value === "dark" ? value : "system";
    } catch (error) {
      return "system"; // storage blocked (a privacy setting): follow the system
    }
  }

  function remember(choice) {
    try {
      if (choice === "system") window.localStorage.removeItem(KEY);
      else window.localStorage.setItem(KEY, choice);
    } catch (error) {
      // not remembered; this page still shows the choice
    }
  }

  function apply(choice) {
    if (choice === "light" || choice === "dark") root.setAttribute("data-theme", choice);
    else root.removeAttribute("data-theme");
    document.querySelectorAll(SWITCH).forEach(function (select) { select.value = choice; });
  }

  apply(chosen());
  document.addEventListener("DOMContentLoaded", function () { apply(chosen()); });
  window.addEventListener("pageshow", function () { apply(chosen()); }); // back/forward cache
  // Another tab changed it: follow.
  window.addEventListener("storage", function (event) {
    if (event.key === KEY || event.key === null) apply(chosen());
  });
  // Delegated: the header's switch works in whatever page htmx has swapped in.
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches(SWITCH)) return;
    var choice = select.value === "light" || select.value === "dark" ? select.value : "system";
    remember(choice);
    apply(choice);
  });
})();
