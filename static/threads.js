// The annotate page's questions menu (templates/annotation/_thread_annotator.html): the question
// form posts in the background and the server's answer replaces the menu alone, so the rating
// in progress (scores, rationale, active time) stays as it is. Not htmx: an htmx swap would
// fire htmx:afterSwap, which annotate.js reads as "a new pair is shown" and restarts the pair's
// clock. Without JavaScript, or when the answer is not a menu, the form posts normally.
(function () {
  "use strict";
  const gettext = window.gettext || function (s) { return s; }; // English without the catalog
  const SHOWN_IN_PLACE = [200, 409, 422, 429]; // sent, refused, to correct, or too many

  async function send(form) {
    const menu = form.closest("[data-thread]");
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    let response;
    try {
      response = await fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { "HX-Request": "true" },
        credentials: "same-origin",
      });
    } catch (error) {
      // The question may or may not have arrived: say so rather than send it twice.
      const status = menu && menu.querySelector("[role=status]");
      if (status) status.textContent = gettext("Not sent? The connection failed; reload the page to see.");
      if (button) button.disabled = false;
      return;
    }
    if (!menu || !SHOWN_IN_PLACE.includes(response.status)) {
      form.submit(); // nothing was stored: the page answer says why
      return;
    }
    const template = document.createElement("template");
    template.innerHTML = (await response.text()).trim();
    const fresh = template.content.firstElementChild;
    if (!fresh || !fresh.matches("[data-thread]")) {
      form.submit();
      return;
    }
    menu.replaceWith(fresh);
    const invalid = fresh.querySelector("[aria-invalid=true]");
    if (invalid || response.status !== 200) {
      const focus = invalid || fresh.querySelector("textarea");
      if (focus) focus.focus();
      return;
    }
    // Sent: the menu closes, the confirmation is said, and the keyboard goes back to the page
    // (annotate.js gives it to the rating form), so digits rate and Enter submits again.
    fresh.open = false;
    const sent = fresh.querySelector(".thread-sent");
    const announcer = document.getElementById("announcer");
    if (announcer && sent) announcer.textContent = sent.textContent.trim();
    document.dispatchEvent(new CustomEvent("thread:sent"));
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.matches || !form.matches("form[data-thread-form]")) return;
    event.preventDefault();
    send(form);
  });
})();
