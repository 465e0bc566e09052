// The upload form: the new task's slug field shows only when "New task…" is the chosen task
// (without JavaScript it is always shown, and the server checks the pair of fields).
(function () {
  "use strict";
  var select = document.querySelector("select[name=task]");
  var input = document.querySelector("input[name=new_task]");
  if (!select || !input) return;
  var box = input.closest(".field") || input.parentElement;
  var NEW = "+new";
  var sync = function () {
    var chosen = select.value === NEW;
    // A field with an error stays visible, so the message is read.
    box.hidden = !chosen && !box.querySelector(".error");
    input.required = chosen;
  };
  select.addEventListener("change", function () {
    sync();
    if (select.value === NEW) input.focus();
  });
  sync();
})();
