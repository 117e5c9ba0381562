"""Read the built book as a reader would: open every page in headless Chromium and fail on what a
reader would see broken.

    python book/check_browser.py [--html book/_build/html] [--screens book/_build/screens]

The pages are served from 127.0.0.1 by a throwaway HTTP server, and Debian's Chromium
(/usr/bin/chromium, or $CHROMIUM) is driven through Playwright, whose own browser download is never
used (it needs the internet). For every page it fails on:

- a JavaScript error (an uncaught exception, or a console message of type "error");
- a request to any host other than the local server (a CDN, fonts, analytics): the request is
  blocked and reported, so a page that would need the internet is found offline;
- a response of 400 or more, or a failed request (a missing script, style sheet or image);
- an image that did not load (``naturalWidth == 0``);
- math left unrendered: a page with math must have MathJax's output (``mjx-container``);
- an internal link whose page does not exist, or whose ``#anchor`` is not an id on that page;
- at phone width (390 px), horizontal overflow: the page wider than the screen
  (``document.documentElement.scrollWidth > clientWidth``), or an element of the text that reaches
  past the screen's edge (so it widens the page or is cut) without being inside a box that scrolls
  sideways (``overflow-x: auto`` or ``scroll``: a wide table or equation must scroll in its box);
- at phone width, a box of the text that holds more than it shows: cut (``overflow-x: hidden`` or
  ``clip``), or scrolling sideways without the cue that says so (the line ``book/_static/book.js``
  puts before it, which must be visible);
- at phone width, a figure whose smallest text is under 8 px: a figure is drawn
  ``figure_style.WIDTH`` inches wide with text of at least ``FONT_SIZE - 1`` points
  (``minishare/analysis/figure_style.py``), so shown w px wide its smallest text is
  w · (FONT_SIZE − 1) / (72 · WIDTH) px (every image at least 300 px wide in its own pixels is
  taken for a figure);
- a page without ``book.js``, or whose ``book.js`` has not marked its boxes 20 s after MathJax;
- Markdown left as text: a table's separator row (``|---|---|``, dashes or the dashes smartquotes
  made of them) in the page's text outside code, where a Markdown table was not parsed.

It saves a screenshot of the first screen of each chapter, notebook and reference page, at
desktop width (1280 px) and at phone width (390 px), plus one of the navigation opened on a phone.
Exit status 0 when every page is clean, 1 otherwise (every problem is listed).
"""
import argparse
import functools
import glob
import html.parser
import http.server
import os
import sys
import threading
import urllib.parse

BOOK = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BOOK))      # this checkout's minishare, for the figures' style
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                  "--disable-default-apps", "--disable-extensions"]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# The elements of the text (furo's <article>) that reach past the right edge of the screen and are
# not inside a box of the text that scrolls sideways, outermost first; and whether the page itself
# scrolls. (Furo's <html> hides horizontal overflow and its .content scrolls, so a too-wide element
# is cut at the screen's edge rather than widening the page: both are looked at.)
OVERFLOW = """() => {
  const W = document.documentElement.clientWidth;
  const scrolls = el => {
    for (let p = el.parentElement; p && p.tagName !== "ARTICLE"; p = p.parentElement) {   // the text's own boxes
      const o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll") return true;
    }
    return false;
  };
  const found = [];
  for (const el of document.querySelectorAll("article *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= W + 0.5 || scrolls(el)) continue;
    if (found.some(f => f.contains(el))) continue;
    found.push(el);
  }
  const name = e => e.tagName.toLowerCase() + (typeof e.className === "string" && e.className
    ? "." + e.className.trim().split(/\\s+/).join(".") : "");
  return {page: document.documentElement.scrollWidth, width: W,
          elements: found.slice(0, 5).map(e => `${name(e)} (right edge at ${Math.round(e.getBoundingClientRect().right)} px): `
                                               + JSON.stringify((e.textContent || "").trim().slice(0, 60)))};
}"""


# Boxes of the text (furo's <article>) wider inside than they show: cut, or scrolling sideways
# without the cue line book.js puts before them. (Inside an equation, MathJax clips its own parts on
# purpose, the extenders of stretched delimiters and the copy for screen readers: only the
# equation's box, mjx-container, is looked at.)
HIDDEN = """() => {
  const found = [];
  for (const el of document.querySelectorAll("article *")) {
    if ((el.tagName !== "MJX-CONTAINER" && el.closest("mjx-container")) || el.clientWidth === 0
        || el.scrollWidth <= el.clientWidth + 1) continue;
    const o = getComputedStyle(el).overflowX;
    const text = JSON.stringify((el.textContent || "").trim().slice(0, 50));
    const what = `${el.tagName.toLowerCase()} (${el.scrollWidth} px in ${el.clientWidth} px)`;
    if (o === "hidden" || o === "clip") found.push(`${what} is cut, nothing shows the rest: ${text}`);
    else if (o === "auto" || o === "scroll") {
      const cue = el.previousElementSibling;
      if (!(cue && cue.classList.contains("scroll-cue") && cue.getBoundingClientRect().height > 0))
        found.push(`${what} scrolls sideways with no cue that it does: ${text}`);
    }
  }
  return found.slice(0, 5);
}"""
# A Markdown table left as text: its separator row in the text of a block, code removed.
RAW_TABLES = r"""() => {
  const row = /(^|\n)[ \t]*\|([ \t]*:?[-\u2010-\u2015\u2212]+:?[ \t]*\|)+[ \t]*(\n|$)/;
  const found = [];
  for (const el of document.querySelectorAll("article p, article li, article dd, article dt, article td, article th, article blockquote")) {
    const copy = el.cloneNode(true);
    copy.querySelectorAll("code, pre, kbd, samp").forEach(c => c.remove());
    if (row.test(copy.textContent)) found.push(JSON.stringify(copy.textContent.trim().slice(0, 60)));
  }
  return found.slice(0, 5);
}"""
FIGURES = """() => [...document.querySelectorAll("article img")].filter(i => i.naturalWidth >= 300)
  .map(i => ({src: i.getAttribute("src"), width: i.getBoundingClientRect().width}))"""
SMALLEST_TEXT = 8          # px: the least a figure's text may be on a phone


def smallest_text_fraction():
    """The smallest text of a course figure as a fraction of the figure's width."""
    from minishare.analysis import figure_style
    return (figure_style.FONT_SIZE - 1) / (72 * figure_style.WIDTH)


def phone_problems(page):
    """What a phone reader cannot see (see ``HIDDEN`` and ``FIGURES``), as messages; [] when nothing."""
    problems = [f"hidden overflow: {e}" for e in page.evaluate(HIDDEN)]
    fraction = smallest_text_fraction()
    for figure in page.evaluate(FIGURES):
        text = figure["width"] * fraction
        if text < SMALLEST_TEXT:
            problems.append(f"figure text {text:.1f} px (under {SMALLEST_TEXT} px): {figure['src']} shown "
                            f"{figure['width']:.0f} px wide")
    return problems


def overflow_problems(page):
    """What overflows the screen at its width (see ``OVERFLOW``), as messages; [] when nothing."""
    found = page.evaluate(OVERFLOW)
    problems = [f"horizontal overflow: {e}" for e in found["elements"]]
    if found["page"] > found["width"]:
        problems.insert(0, f"the page is {found['page']} px wide on a {found['width']} px screen")
    return problems


class _Anchors(html.parser.HTMLParser):
    """The ids (and a names) of one HTML page, and its links."""

    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])


@functools.lru_cache(maxsize=None)
def parse(path):
    parser = _Anchors()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    return parser


def broken_links(root, page):
    """Internal links of ``page`` (a path under ``root``) to a missing file or a missing anchor."""
    problems = []
    for href in parse(page).links:
        url = urllib.parse.urlsplit(href)
        if url.scheme or url.netloc or href.startswith("mailto:"):
            continue          # an outside link is not followed (a request would be caught anyway)
        target = page if not url.path else os.path.normpath(
            os.path.join(os.path.dirname(page), urllib.parse.unquote(url.path)))
        if os.path.isdir(target):
            target = os.path.join(target, "index.html")
        if not target.startswith(root) or not os.path.exists(target):
            problems.append(f"link {href!r}: no file {os.path.relpath(target, root)}")
            continue
        fragment = urllib.parse.unquote(url.fragment)
        if fragment and target.endswith(".html") and fragment not in parse(target).ids:
            problems.append(f"link {href!r}: no anchor #{fragment} on {os.path.relpath(target, root)}")
    return problems


def serve(root):
    handler = functools.partial(_QuietHandler, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def screenshot_name(rel):
    """chapters/01_autograd.html -> chapters_01_autograd; only pages a reader reads get one."""
    if rel.startswith(("chapters/", "notebooks/")) or rel in (
            "index.html", "preface.html", "api.html", "appendix.html", "notebooks.html",
            "api/generated/minishare.sharing.html", "api/generated/minishare.tensor.html"):
        return os.path.splitext(rel)[0].replace("/", "_")
    return None


def check(root, screens, chromium):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout, sync_playwright

    root = os.path.abspath(root)
    pages = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "**", "*.html"), recursive=True)
                   if "/_static/" not in p and "/_sources/" not in p)
    if not pages:
        raise SystemExit(f"no HTML pages under {root}: build the book first (bash book/build.sh)")
    os.makedirs(screens, exist_ok=True)
    server = serve(root)
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    problems = {}

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
        for viewport in (DESKTOP, PHONE):
            phone = viewport is PHONE
            context = browser.new_context(viewport=viewport, device_scale_factor=1)
            page = context.new_page()
            page.set_default_timeout(120_000)      # a loaded 2-core machine serves slowly; never a reason to fail
            current = {"errors": []}

            def route(r):
                if r.request.url.startswith(origin + "/") or r.request.url.startswith(("data:", "blob:")):
                    r.continue_()
                else:
                    current["errors"].append(f"request to another host: {r.request.url}")
                    r.abort()

            page.route("**/*", route)
            page.on("console", lambda m: m.type == "error" and current["errors"].append(f"console error: {m.text}"))
            page.on("pageerror", lambda e: current["errors"].append(f"JavaScript exception: {e}"))
            page.on("requestfailed", lambda r: r.url.startswith(origin) and current["errors"].append(
                f"request failed: {r.url} ({r.failure})"))
            page.on("response", lambda r: r.status >= 400 and current["errors"].append(
                f"HTTP {r.status}: {r.url}"))

            for rel in pages:
                name = screenshot_name(rel)
                if phone and name is None:
                    continue          # every page is checked at desktop width; the read ones at both
                current["errors"] = []
                try:
                    page.goto(f"{origin}/{rel}", wait_until="load")
                except PlaywrightTimeout:
                    problems.setdefault(rel, []).append(f"[{'phone' if phone else 'desktop'}] did not load in 120 s")
                    continue
                if page.locator(".math").count():
                    try:
                        page.wait_for_selector("mjx-container", timeout=20000)
                        page.wait_for_function("() => !document.querySelector('.math:not(:has(mjx-container))')"
                                               " || window.MathJax?.startup?.promise", timeout=20000)
                    except Exception:
                        current["errors"].append("math not rendered (no mjx-container after 20 s)")
                if not page.locator("script[src*='book.js']").count():
                    current["errors"].append("book.js is not loaded: nothing marks the boxes that scroll sideways")
                else:
                    try:        # book.js has put its scroll cues in place (after MathJax)
                        page.wait_for_function("() => document.documentElement.dataset.scrollCues === 'done'",
                                               timeout=20000)
                    except PlaywrightTimeout:
                        current["errors"].append("book.js did not mark the boxes that scroll (no data-scroll-cues)")
                # every image has finished, loaded or failed (lazy images are not deferred here)
                page.wait_for_function("() => [...document.images].every(i => i.complete)")
                for src in page.eval_on_selector_all(
                        "img", "els => els.filter(e => !(e.complete && e.naturalWidth > 0)).map(e => e.src)"):
                    current["errors"].append(f"image not loaded: {src}")
                if not phone:
                    current["errors"] += broken_links(root, os.path.join(root, rel))
                    current["errors"] += [f"Markdown table left as text: {t}" for t in page.evaluate(RAW_TABLES)]
                else:
                    current["errors"] += overflow_problems(page) + phone_problems(page)
                if name:
                    page.screenshot(path=os.path.join(screens, f"{name}{'_phone' if phone else ''}.png"))
                if current["errors"]:
                    problems.setdefault(rel, []).extend(
                        (f"[{'phone' if phone else 'desktop'}] " + e) for e in current["errors"])
            if phone:          # the navigation must open on a narrow screen
                page.goto(f"{origin}/index.html", wait_until="load")
                button = page.locator("label.nav-overlay-icon")
                if button.count() and button.first.is_visible():
                    button.first.click()
                    page.wait_for_timeout(500)
                    page.screenshot(path=os.path.join(screens, "index_phone_navigation.png"))
                opened = page.locator(".sidebar-drawer")
                if not (opened.count() and opened.first.is_visible()):
                    problems.setdefault("index.html", []).append("[phone] the navigation does not open")
            context.close()
        browser.close()
    server.shutdown()
    return pages, problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", default=os.path.join(BOOK, "_build", "html"))
    parser.add_argument("--screens", default=os.path.join(BOOK, "_build", "screens"))
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args(argv)
    pages, problems = check(args.html, args.screens, args.chromium)
    for rel, errors in problems.items():
        print(f"FAIL {rel}")
        for e in errors:
            print(f"  {e}")
    shots = len(glob.glob(os.path.join(args.screens, "*.png")))
    print(f"browser check: {len(pages)} pages, {len(pages) - len(problems)} clean, {len(problems)} with "
          f"problems; {shots} screenshots in {args.screens}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
