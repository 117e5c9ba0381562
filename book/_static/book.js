/* A box of the text that is wider than the screen scrolls sideways in itself (book.css); this says
   so. Every such box that holds more than it shows gets the class "scrolls" (book.css shades its
   edges) and, just before it, a line that says it scrolls. Run when the page has loaded, again
   when MathJax has typeset (its equations are measured only then) and on every resize, so a box
   that fits after a rotation loses its cue. book/check_browser.py fails on a box that scrolls
   without one. */
(function () {
  "use strict";
  const CUE = "scroll-cue";

  function scrollsSideways(el) {
    const o = getComputedStyle(el).overflowX;
    return (o === "auto" || o === "scroll") && el.scrollWidth > el.clientWidth + 1;
  }

  function mark() {
    const article = document.querySelector("article");
    if (!article) return;
    for (const el of article.querySelectorAll("*")) {
      if (el.classList.contains(CUE)) continue;
      const cue = el.previousElementSibling && el.previousElementSibling.classList.contains(CUE)
        ? el.previousElementSibling : null;
      if (scrollsSideways(el)) {
        el.classList.add("scrolls");
        if (!cue) {
          const line = document.createElement("div");
          line.className = CUE;
          line.setAttribute("aria-hidden", "true");
          line.textContent = "this box scrolls sideways \u21c4";
          el.parentNode.insertBefore(line, el);
        }
      } else if (el.classList.contains("scrolls")) {
        el.classList.remove("scrolls");
        if (cue) cue.remove();
      }
    }
  }

  let pending = null;
  function later() {
    if (pending) cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => { pending = null; mark(); });
  }

  // data-scroll-cues="done" on <html> once the cues are in place (the browser check waits for it)
  function done() { mark(); document.documentElement.dataset.scrollCues = "done"; }
  window.addEventListener("load", () => {
    const typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
    if (document.querySelector(".math") && typeset) typeset.then(done); else done();
  });
  window.addEventListener("resize", later);
})();
