// Swagger UI (/api/docs/) draws its dialog's close button as an icon with no name, and names its
// Authorize and Logout buttons with words they do not show ("Apply credentials"): a speech user
// saying what they see would miss them. Each drawing of the UI gets the button a name and the
// others their visible words (axe-core: button-name, label-content-name-mismatch). Only
// attributes change: React keeps the elements.
(() => {
  const root = document.getElementById("swagger-ui");
  if (!root) return;
  const name = () => {
    for (const button of root.querySelectorAll(".close-modal:not([aria-label])")) {
      button.setAttribute("aria-label", "Close");
    }
    for (const button of root.querySelectorAll(".auth-btn-wrapper button[aria-label]")) {
      button.removeAttribute("aria-label");
    }
  };
  new MutationObserver(name).observe(root, { childList: true, subtree: true });
})();
