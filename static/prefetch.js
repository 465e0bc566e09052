// Preloads the images of the pair the expert will most likely rate next while they rate this
// one, so that Enter shows the next pair at once. Once the pair's own images are in
// and the page is idle, it asks the server for the likely next pair's image addresses (the
// workspace's data-upcoming: a guess, nothing is claimed) and loads and decodes them in
// detached Image objects: nothing is added to the page, so nothing of the next pair shows. A
// wrong guess costs a few unused downloads. Images are named by their content and cached.
(function () {
  "use strict";
  const MAX_WAIT_MS = 2000; // for the pair's own images (lazy ones off-screen never load)
  let held = new Map(); // address → Image of the last guess, kept (decoded) until replaced
  let asked = null; // the hint last acted on

  function whenIdle(callback) {
    if (window.requestIdleCallback) window.requestIdleCallback(callback, { timeout: MAX_WAIT_MS });
    else window.setTimeout(callback, 200);
  }

  // The pair's own images first: the preload must never slow down what the expert looks at.
  function ownImagesLoaded(root) {
    const pending = Array.from(root.querySelectorAll("img")).filter((img) => !img.complete);
    const loaded = Promise.all(pending.map((img) => new Promise((resolve) => {
      img.addEventListener("load", resolve, { once: true });
      img.addEventListener("error", resolve, { once: true });
    })));
    return Promise.race([loaded, new Promise((resolve) => window.setTimeout(resolve, MAX_WAIT_MS))]);
  }

  function preload(addresses) {
    const next = new Map();
    addresses.forEach((address) => {
      if (typeof address !== "string" || !address.startsWith("/")) return; // our own only
      let image = held.get(address);
      if (!image) {
        image = new Image();
        image.decoding = "async";
        image.src = address;
        image.decode().catch(() => {}); // decoded ahead too; a failure shows on the real page
      }
      next.set(address, image);
    });
    held = next;
  }

  function guess() {
    const workspace = document.getElementById("workspace");
    const hint = workspace && workspace.querySelector("[data-upcoming]");
    if (!hint || hint === asked) return;
    asked = hint;
    ownImagesLoaded(workspace).then(() => whenIdle(() => {
      if (!hint.isConnected) return; // the expert has moved on meanwhile
      fetch(hint.dataset.upcoming, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then((response) => (response.ok ? response.json() : { images: [] }))
        .then((data) => preload(Array.isArray(data.images) ? data.images : []))
        .catch(() => {}); // only a guess: nothing to tell the expert
    }));
  }

  document.addEventListener("DOMContentLoaded", guess);
  document.addEventListener("htmx:afterSettle", guess);
})();
