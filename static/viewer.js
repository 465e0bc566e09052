// The image viewer of the annotate page (placeholder: opens the image at natural size).
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest("a.zoomable");
  if (link) {
    event.preventDefault();
    const zoom = document.getElementById("zoom");
    zoom.querySelector("img").src = link.href;
    zoom.showModal();
    return;
  }
  const zoom = event.target.closest && event.target.closest("dialog.zoom");
  if (zoom && event.target.tagName === "IMG") zoom.close();
});
