// The annotate page's images whole in the window-filling layout (arbiter.css: 900 × 600 and
// up). CSS fits each image to its response box, but an answer that mixes text and images, or
// shows several, still had its images cut at the box's lower edge or out of sight below it (a
// reasoning chart's axis, a story's second picture). So, per response:
//  - when everything can fit with every image at least MIN_PX tall (or at its fitted size if
//    smaller), the images share one height limit, the largest that fits: the whole answer is
//    on the first screen;
//  - else, when two or three columns show them all whole (a story's steps), in columns;
//  - otherwise (a long answer, it scrolls) the image that the box's lower edge would cut on
//    the first screen is drawn smaller to end above it, or, with too little room left, begins
//    below it: no image is ever cut when the pair appears, and scrolled to, each is whole.
// Below that (phones, low windows) the page scrolls and the rating dock is fixed to the
// window's bottom edge over it (arbiter.css). There the page's scroll padding is the dock's
// height, so whatever the browser brings into view (a link, find in page, the keyboard's focus,
// a response scrolled to) stops above the dock, not under it; main's bottom padding is the
// same, so the last response scrolls clear of it; and no image is taller than the room above
// the dock (phones' response boxes are shorter already; a low window's are not), so each, once
// scrolled to, is whole. The dock's height changes with "More": all three follow it.
// "Images: natural size" under View (annotate.js) turns the fitting off, not the paddings.
(function () {
  "use strict";
  const MIN_PX = 160; // an image shared with others is never made smaller than this
  const MAX_COLUMNS = 3;
  const MIN_COLUMN_PX = 140;
  const LIMIT_STEP_PX = 12;
  const WINDOW = "(min-width: 900px) and (min-height: 600px)";
  const DOCK_GAP_PX = 8; // between what is brought into view and the dock
  const MIN_ROOM_PX = 120; // the least room above the dock fixed to the window's bottom edge
  let queued = false;

  const images = (body) => Array.from(body.querySelectorAll("a.zoomable img"));

  function reset(body) {
    body.style.columnCount = "";
    images(body).forEach((img) => {
      img.style.maxHeight = "";
      img.parentElement.style.marginBlockStart = "";
    });
  }

  // The largest common height limit with which the images give up `excess` pixels; null when
  // even MIN_PX is not enough. `heights` are the images' heights without the limit.
  function sharedLimit(heights, excess) {
    const floor = (h) => Math.min(h, MIN_PX);
    const most = heights.reduce((sum, h) => sum + h - floor(h), 0);
    if (most < excess) return null;
    let low = MIN_PX;
    let high = Math.max(...heights);
    for (let step = 0; step < 24 && high - low > 0.5; step += 1) {
      const limit = (low + high) / 2;
      const saved = heights.reduce((sum, h) => sum + Math.max(0, h - Math.max(limit, floor(h))), 0);
      if (saved >= excess) low = limit;
      else high = limit;
    }
    return Math.floor(low);
  }

  function overflows(body) {
    return body.scrollHeight > body.clientHeight + 0.5;
  }

  // A few pictures with their words (a story's steps): side by side in two or three columns,
  // read down each in turn, when that shows them all whole at MIN_COLUMN_PX or more.
  function inColumns(body, all) {
    const tallest = Math.max(...all.map((img) => img.getBoundingClientRect().height));
    const fits = () => body.scrollHeight <= body.clientHeight + 0.5 && body.scrollWidth <= body.clientWidth + 0.5;
    for (let count = 2; count <= Math.min(MAX_COLUMNS, all.length); count += 1) {
      body.style.columnCount = String(count);
      // The largest common limit, in steps, that lets the columns hold everything.
      for (let limit = Math.ceil(tallest); limit >= MIN_COLUMN_PX; limit -= LIMIT_STEP_PX) {
        all.forEach((img) => { img.style.maxHeight = limit + "px"; });
        if (fits()) return true;
      }
      all.forEach((img) => { img.style.maxHeight = ""; });
    }
    body.style.columnCount = "";
    return false;
  }

  function fit(body) {
    reset(body);
    if (!overflows(body)) return;
    const all = images(body);
    if (!all.length) return;
    const heights = all.map((img) => img.getBoundingClientRect().height);
    const limit = sharedLimit(heights, body.scrollHeight - body.clientHeight);
    if (limit !== null) {
      all.forEach((img) => { img.style.maxHeight = limit + "px"; });
      if (!overflows(body)) return;
      reset(body); // rounding or a reflow of the text: fall back
    }
    if (inColumns(body, all)) return;
    // Where the box's lower edge is on the first screen (the expert may have scrolled since).
    const box = body.getBoundingClientRect();
    const bottom = box.top + body.clientTop + body.clientHeight - body.scrollTop;
    const cut = all.find((img) => {
      const r = img.getBoundingClientRect();
      return r.top < bottom && r.bottom > bottom + 0.5;
    });
    if (!cut) return;
    const top = cut.getBoundingClientRect().top;
    const room = Math.floor(bottom - top - 8); // the link's margin below the image
    if (room >= Math.min(MIN_PX, cut.getBoundingClientRect().height / 2)) {
      cut.style.maxHeight = room + "px";
    } else {
      cut.parentElement.style.marginBlockStart = Math.ceil(bottom - top + 8) + "px";
    }
  }

  // The height the dock covers at the window's bottom edge (0 where it is in the page's flow).
  // A dock that would leave less than MIN_ROOM_PX above it ("More" opened in a low window) goes
  // back into the page's flow (.in-flow, arbiter.css), where the page scrolls to its last rows.
  function dockHeight() {
    const dock = document.querySelector("#workspace .dock");
    if (!dock) return 0;
    dock.classList.remove("in-flow");
    if (window.getComputedStyle(dock).position !== "fixed") return 0;
    const height = Math.ceil(dock.getBoundingClientRect().height);
    if (height + 2 * DOCK_GAP_PX + MIN_ROOM_PX <= window.innerHeight) return height;
    dock.classList.add("in-flow");
    return 0;
  }

  // The page's scroll padding and main's bottom padding, for a dock `dock` pixels high. Main
  // outlives a pair (htmx swaps the workspace inside it): the next pair keeps the padding
  // until it is measured again.
  function pad(dock) {
    const root = document.documentElement;
    const workspace = document.getElementById("workspace");
    const main = workspace && workspace.parentElement;
    if (!dock) {
      root.style.scrollPaddingBottom = "";
      if (main) main.style.paddingBottom = "";
      return;
    }
    root.style.scrollPaddingBottom = dock + DOCK_GAP_PX + "px";
    if (main) main.style.paddingBottom = dock + DOCK_GAP_PX + "px";
  }

  // No image taller than `room`, the window's height above the dock.
  function aboveDock(body, room) {
    reset(body);
    images(body).forEach((img) => {
      if (img.getBoundingClientRect().height > room + 0.5) img.style.maxHeight = room + "px";
    });
  }

  function fitAll() {
    queued = false;
    const bodies = document.querySelectorAll("#workspace .response-body");
    const natural = document.documentElement.classList.contains("natural-images");
    const dock = dockHeight();
    pad(dock);
    const room = Math.floor(window.innerHeight - dock - 2 * DOCK_GAP_PX);
    bodies.forEach((body) => {
      if (natural) reset(body);
      else if (window.matchMedia(WINDOW).matches) fit(body);
      else if (dock) aboveDock(body, room);
      else reset(body);
    });
  }

  function later() {
    if (queued) return;
    queued = true;
    window.requestAnimationFrame(fitAll);
  }

  // A box that changes size (the window, the dock's rows opening, the prompt's images
  // arriving) is fitted again; fitting changes what is inside a box, never its size. The dock
  // too: "More" opens it over more of a phone's window.
  const resized = window.ResizeObserver ? new ResizeObserver(later) : null;

  function start() {
    if (resized) {
      resized.disconnect();
      document.querySelectorAll("#workspace .response-body, #workspace .dock").forEach((box) => resized.observe(box));
    }
    fitAll();
  }

  pad(dockHeight()); // before the first paint, as the script ends the page (after annotate.js)
  document.addEventListener("DOMContentLoaded", start);
  document.addEventListener("htmx:afterSettle", start);
  window.addEventListener("resize", later);
  // An image without its size in the page takes its height when it loads.
  document.addEventListener("load", (event) => {
    if (event.target.matches && event.target.matches("#workspace .response-body img")) later();
  }, true);
  // "Images: natural size" toggles a class on <html> (annotate.js).
  new MutationObserver(later).observe(document.documentElement, { attributes: true, attributeFilter: ["class"] });
  document.fonts && document.fonts.ready.then(later);
})();
