// The image viewer of the annotate page (templates/annotation/_viewer.html, "Image viewer" in
// arbiter.css). Clicking an image (a.zoomable, or Enter on it) opens it fitted to a dialog that
// fills most of the window. Zoom: wheel (around the cursor), + / - keys and buttons, 0 fits,
// 1 shows natural pixels; pan: drag (pointer events, pinch on touch) or the arrow keys.
// When the image has a counterpart (same index on the other response side; for a prompt image,
// the Left image: an editing task's input against an edit) three modes show both with ONE
// transform, so the same region of each is in view: compare (c, side by side), flicker (x, one
// stage, switches image) and swipe (w, the second drawn over the first, clipped at a slider).
// [ and ] step to the previous / next image of the pair, in reading order: the prompt's, then
// Left's, then Right's (no wrap-around: the ends are said, not jumped over).
// Closing (Esc, Close, the backdrop) dispatches a cancelable `viewer:closed` on the dialog; a
// page that takes the focus itself (the annotate page: back to the rating form) cancels it,
// elsewhere the focus goes back to the image last shown.
// Listeners sit on `document`: htmx replaces the workspace (and its images) on every pair.
(function () {
  "use strict";
  const STEP = 1.25; // one key press or button click zooms by 25 %
  const MAX_NATURAL = 8; // zoom reaches at least 800 % of natural size...
  const MAX_FIT = 8; // ...and 8 × the fitted size, so a tiny image can still be magnified
  const PIXELATED_ABOVE = 2; // past 200 % show crisp pixels: experts look for artefacts
  const PAN_STEP = 0.1; // an arrow key pans by a tenth of the stage

  // Words shown or said come from the page's JavaScript catalog (/jsi18n/, loaded first);
  // English without it.
  const gettext = window.gettext || function (s) { return s; };
  const interpolate = window.interpolate || function (s, obj) { return s.replace(/%\((\w+)\)s/g, (m, k) => String(obj[k])); };
  let view = null; // the open viewer's state; null while closed
  let statusTimer = 0;
  const pointers = new Map(); // pointer id → last position, while dragging or pinching

  const dialog = () => document.getElementById("zoom");
  const part = (selector) => dialog().querySelector(selector);
  const stages = () => Array.from(dialog().querySelectorAll(".viewer-stage"));

  function sideOf(link) {
    // A page may name its sides (the lead's pair page: A and B, where Left and Right would not).
    const named = link.closest("[data-viewer-side]");
    if (named) return named.dataset.viewerSide;
    if (link.closest("#left")) return gettext("Left");
    if (link.closest("#right")) return gettext("Right");
    return link.closest(".prompt") ? gettext("Prompt") : gettext("Image");
  }

  function describe(link) {
    const img = link.querySelector("img");
    // The template writes the asset's size on the inline <img>: known before any load.
    const size = (name, natural) => Number(img && img.getAttribute(name)) || (img && img[natural]) || 1;
    return {
      src: link.href,
      label: sideOf(link),
      alt: img && img.alt ? img.alt : interpolate(gettext("%(side)s image"), { side: sideOf(link) }, true),
      w: size("width", "naturalWidth"),
      h: size("height", "naturalHeight"),
    };
  }

  // The counterpart of a Left image is the Right image of the same index and the other way
  // round; a prompt image pairs with the Left image of its index. Display order is always
  // Prompt|Left or Left|Right, whichever one was opened.
  function counterpart(link) {
    const scope = link.closest("#left, #right, .prompt");
    if (!scope) return null;
    const index = Array.from(scope.querySelectorAll("a.zoomable")).indexOf(link);
    const other = scope.id === "left" ? "#right" : "#left";
    const match = document.querySelectorAll(other + " a.zoomable")[index];
    return match ? { link: match, first: scope.id !== "right" } : null;
  }

  // The images [ and ] step through: the prompt's, Left's, Right's (page order inside each);
  // an image outside those (a page without them) steps through every image of the page.
  function gallery(link) {
    const ordered = [".prompt", "#left", "#right"].flatMap((scope) =>
      Array.from(document.querySelectorAll(scope + " a.zoomable")));
    return ordered.includes(link) ? ordered : Array.from(document.querySelectorAll("a.zoomable"));
  }

  function stageSize() {
    const stage = stages()[0];
    return [stage.clientWidth || 1, stage.clientHeight || 1];
  }

  function fitScale() {
    const [w, h] = stageSize();
    return Math.min(w / view.ref.w, h / view.ref.h);
  }

  function limits() {
    const fit = fitScale();
    return [Math.min(fit, 1), Math.max(MAX_NATURAL, fit * MAX_FIT)];
  }

  // Centre the image on an axis where it is smaller than the stage; elsewhere keep the stage
  // covered (no panning the image out of sight).
  function clampAxis(position, size, room) {
    return size <= room ? (room - size) / 2 : Math.min(0, Math.max(room - size, position));
  }

  function apply() {
    const [w, h] = stageSize();
    const [min, max] = limits();
    view.scale = Math.min(max, Math.max(min, view.scale));
    view.x = clampAxis(view.x, view.ref.w * view.scale, w);
    view.y = clampAxis(view.y, view.ref.h * view.scale, h);
    view.size = [w, h];
    // Every image gets the same box (the opened image's natural size; object-fit contains a
    // counterpart of another size in it) and the same transform: the views stay in step.
    const transform = "translate(" + view.x + "px, " + view.y + "px) scale(" + view.scale + ")";
    dialog().querySelectorAll(".viewer-stage img").forEach((img) => {
      img.style.width = view.ref.w + "px";
      img.style.height = view.ref.h + "px";
      img.style.transform = transform;
    });
    const zoomed = view.ref.w * view.scale > w + 1 || view.ref.h * view.scale > h + 1;
    stages().forEach((stage) => {
      stage.classList.toggle("pixelated", view.scale > PIXELATED_ABOVE);
      stage.classList.toggle("zoomed", zoomed);
    });
    const divider = part(".viewer-divider");
    const at = view.x + (view.split / 100) * view.ref.w * view.scale;
    divider.style.left = Math.min(w - 2, Math.max(0, at)) + "px";
    announce();
  }

  function zoomTo(scale, px, py) {
    const [w, h] = stageSize();
    const [min, max] = limits();
    const next = Math.min(max, Math.max(min, scale));
    const cx = px === undefined ? w / 2 : px;
    const cy = py === undefined ? h / 2 : py;
    // Keep the image point under (cx, cy) where it is.
    view.x = cx - ((cx - view.x) * next) / view.scale;
    view.y = cy - ((cy - view.y) * next) / view.scale;
    view.scale = next;
    view.fitted = false;
    apply();
  }

  function fit() {
    view.scale = fitScale();
    view.fitted = true;
    apply();
  }

  function pan(dx, dy) {
    view.x += dx;
    view.y += dy;
    apply();
  }

  // Stages change size with the mode or the window: a fitted image is fitted again, a zoomed
  // one keeps the point at the stage's centre.
  function relayout() {
    const [w0, h0] = view.size;
    const [w, h] = stageSize();
    if (view.fitted) return fit();
    view.x += (w - w0) / 2;
    view.y += (h - h0) / 2;
    apply();
  }

  function announce() {
    const [opened, other] = view.images;
    const [first, second] = view.firstIsOpened ? [opened, other] : [other, opened];
    const shown = view.images[view.shown];
    const doing = {
      single: () => shown.alt,
      flicker: () => interpolate(gettext("flicker, showing %(side)s"), { side: shown.label }, true),
      compare: () => interpolate(gettext("comparing %(first)s and %(second)s"), { first: first.label, second: second.label }, true),
      swipe: () => interpolate(gettext("swipe, %(over)s over %(under)s from %(split)s"), { over: second.label, under: first.label, split: view.split + " %" }, true),
    }[view.mode]();
    const said = view.fitted ? gettext("Zoom %(zoom)s (fit), %(doing)s%(position)s") : gettext("Zoom %(zoom)s, %(doing)s%(position)s");
    say(interpolate(said, { zoom: Math.round(view.scale * 100) + " %", doing: doing, position: position() }, true));
  }

  function position() {
    return view.count > 1 ? interpolate(gettext(" (%(index)s of %(count)s)"), { index: view.index + 1, count: view.count }, true) : "";
  }

  function say(text) {
    // A wheel spins through many zoom levels: the live region reads the one it settles on.
    clearTimeout(statusTimer);
    statusTimer = setTimeout(() => { part(".viewer-status").textContent = text; }, 150);
  }

  function show(img, image) {
    if (!image) return;
    if (img.getAttribute("src") !== image.src) img.src = image.src;
    img.alt = image.alt;
  }

  // Puts the images and labels of the current mode in the stages, then lays them out.
  function render() {
    const paired = Boolean(view.images[1]);
    const firstIndex = view.firstIsOpened ? 0 : 1;
    const [one, two] = stages();
    const imgs = one.querySelectorAll("img");
    imgs.forEach((img, i) => {
      show(img, view.images[i]);
      const visible = view.mode === "compare" ? i === firstIndex : view.mode === "swipe" ? paired : i === view.shown;
      const over = view.mode === "swipe" && i !== firstIndex;
      img.style.visibility = visible ? "" : "hidden";
      img.style.zIndex = over ? "1" : "";
      img.style.clipPath = over ? "inset(0 0 0 " + view.split + "%)" : "";
    });
    show(two.querySelector("img"), view.images[1 - firstIndex]);
    two.hidden = view.mode !== "compare";
    const first = view.images[firstIndex];
    const second = view.images[1 - firstIndex];
    const [label, endLabel] = one.querySelectorAll(".viewer-label");
    label.textContent = view.mode === "compare" || view.mode === "swipe" ? first.label : view.images[view.shown].label;
    endLabel.textContent = view.mode === "swipe" ? second.label : "";
    endLabel.hidden = view.mode !== "swipe";
    two.querySelector(".viewer-label").textContent = paired ? second.label : "";
    part(".viewer-divider").hidden = view.mode !== "swipe";
    part(".viewer-split").hidden = view.mode !== "swipe";
    part("[data-viewer-name]").textContent = view.images[0].alt + " · " + view.ref.w + " × " + view.ref.h + position();
    for (const mode of ["compare", "flicker", "swipe"]) {
      const button = part('[data-viewer="' + mode + '"]');
      button.disabled = !paired; // nothing to compare with: the modes are shown but off
      button.setAttribute("aria-pressed", String(view.mode === mode));
    }
    dialog().dataset.mode = view.mode;
    relayout();
  }

  function setMode(mode) {
    if (!view.images[1]) return;
    view.mode = view.mode === mode ? "single" : mode;
    render();
  }

  function flicker() {
    if (!view.images[1]) return;
    // From compare or swipe, start on the image that was opened.
    view.shown = view.mode === "flicker" || view.mode === "single" ? 1 - view.shown : 0;
    view.mode = "flicker";
    render();
  }

  // [ / ]: the previous / next image of the pair, fitted, in the same mode when it has a
  // counterpart too (compare step N of Left with step N of Right, then step N+1).
  function step(delta) {
    const all = gallery(view.opener);
    const next = all[all.indexOf(view.opener) + delta];
    if (next) open(next, view.mode);
    else say(interpolate(delta < 0 ? gettext("First image of %(count)s, %(name)s") : gettext("Last image of %(count)s, %(name)s"), { count: all.length, name: view.images[0].alt }, true));
  }

  const actions = {
    in: () => zoomTo(view.scale * STEP),
    out: () => zoomTo(view.scale / STEP),
    fit: fit,
    actual: () => zoomTo(1),
    compare: () => setMode("compare"),
    swipe: () => setMode("swipe"),
    flicker: flicker,
  };

  const keys = {
    "+": actions.in, "=": actions.in, "-": actions.out, _: actions.out, "0": fit, "1": actions.actual,
    c: actions.compare, x: flicker, w: actions.swipe, "[": () => step(-1), "]": () => step(1),
    ArrowLeft: () => pan(stageSize()[0] * PAN_STEP, 0),
    ArrowRight: () => pan(-stageSize()[0] * PAN_STEP, 0),
    ArrowUp: () => pan(0, stageSize()[1] * PAN_STEP),
    ArrowDown: () => pan(0, -stageSize()[1] * PAN_STEP),
  };

  function open(link, mode) {
    const box = dialog();
    if (!box) return;
    const match = counterpart(link);
    const opened = describe(link);
    const all = gallery(link);
    const split = view && mode === "swipe" ? view.split : 50;
    view = {
      opener: link, images: [opened, match ? describe(match.link) : null], ref: opened,
      firstIsOpened: match ? match.first : true, mode: match && mode ? mode : "single", shown: 0,
      scale: 1, x: 0, y: 0, fitted: true, split: split, size: [1, 1],
      index: all.indexOf(link), count: all.length,
    };
    part("[data-viewer-split]").value = String(split);
    if (!box.open) box.showModal();
    render();
    part(".viewer-stages").focus({ preventScroll: true });
  }

  function stagePoint(event) {
    const stage = event.target.closest(".viewer-stage");
    const rect = stage.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  const isOpen = () => view && dialog() && dialog().open;

  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a.zoomable");
    // A modified or middle click still opens the image in a new tab.
    if (link && !(event.ctrlKey || event.metaKey || event.shiftKey || event.button)) {
      event.preventDefault();
      open(link);
      return;
    }
    if (!isOpen()) return;
    const button = event.target.closest("[data-viewer]");
    if (button && actions[button.dataset.viewer]) actions[button.dataset.viewer]();
    // A click on the backdrop (outside the dialog's box) closes it, like Esc.
    const rect = dialog().getBoundingClientRect();
    const outside = event.clientX < rect.left || event.clientX > rect.right || event.clientY < rect.top || event.clientY > rect.bottom;
    if (event.target === dialog() && outside && event.detail > 0) dialog().close();
  });

  document.addEventListener("keydown", (event) => {
    // annotate.js ignores keys while a dialog is open; these are ours only while we are open.
    if (!isOpen() || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (event.target.matches && event.target.matches("input[type=range]") && event.key.startsWith("Arrow")) return;
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });

  document.addEventListener("input", (event) => {
    if (!isOpen() || !event.target.matches("[data-viewer-split]")) return;
    view.split = Number(event.target.value);
    render();
  });

  document.addEventListener("wheel", (event) => {
    if (!isOpen() || !event.target.closest(".viewer-stage")) return;
    event.preventDefault(); // the page behind must not scroll
    const lines = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
    const point = stagePoint(event);
    zoomTo(view.scale * Math.exp(-event.deltaY * lines * 0.002), point.x, point.y);
  }, { passive: false });

  document.addEventListener("dblclick", (event) => {
    if (!isOpen() || !event.target.closest(".viewer-stage")) return;
    const point = stagePoint(event);
    if (view.fitted) zoomTo(view.scale * 3, point.x, point.y);
    else fit();
  });

  document.addEventListener("pointerdown", (event) => {
    if (!isOpen() || !event.target.closest(".viewer-stage") || event.button !== 0) return;
    event.target.closest(".viewer-stage").setPointerCapture(event.pointerId);
    pointers.set(event.pointerId, stagePoint(event));
  });

  document.addEventListener("pointermove", (event) => {
    const last = pointers.get(event.pointerId);
    if (!isOpen() || !last) return;
    const point = stagePoint(event);
    if (pointers.size === 2) {
      // Pinch: zoom by the change of distance between the two fingers, around their middle.
      const other = Array.from(pointers.entries()).find(([id]) => id !== event.pointerId)[1];
      const before = Math.hypot(last.x - other.x, last.y - other.y) || 1;
      const after = Math.hypot(point.x - other.x, point.y - other.y) || 1;
      zoomTo(view.scale * (after / before), (point.x + other.x) / 2, (point.y + other.y) / 2);
    } else {
      pan(point.x - last.x, point.y - last.y);
    }
    pointers.set(event.pointerId, point);
  });

  for (const type of ["pointerup", "pointercancel"]) {
    document.addEventListener(type, (event) => { pointers.delete(event.pointerId); });
  }

  // `close` does not bubble: listen in the capture phase. The page may take the focus (see the
  // top); if it does not, the focus goes back to the image last shown.
  document.addEventListener("close", (event) => {
    if (event.target !== dialog() || !view) return;
    const opener = view.opener;
    view = null;
    pointers.clear();
    clearTimeout(statusTimer);
    const closed = new CustomEvent("viewer:closed", { bubbles: true, cancelable: true, detail: { opener: opener } });
    if (event.target.dispatchEvent(closed) && opener.isConnected) opener.focus({ preventScroll: true });
  }, true);

  window.addEventListener("resize", () => { if (isOpen()) relayout(); });
})();
