// The project tabs' menus (templates/dashboards/_tab_groups.html) close as menus do: Escape
// closes the open one and returns the focus to its name, a click elsewhere closes it. Without
// this script they still open and close from their names.
(function () {
  "use strict";
  function openMenus() {
    return document.querySelectorAll("nav.tab-groups details.tab-menu[open]");
  }
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    openMenus().forEach(function (menu) {
      menu.open = false;
      if (menu.contains(document.activeElement)) menu.querySelector("summary").focus();
    });
  });
  document.addEventListener("click", function (event) {
    openMenus().forEach(function (menu) {
      if (!menu.contains(event.target)) menu.open = false;
    });
  });
})();
