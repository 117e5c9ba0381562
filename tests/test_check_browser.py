"""The browser check (``book/check_browser.py``) fails on what a phone or desktop reader would see
broken, each rule on a small page that has exactly its fault, and passes the same page mended:

- a Markdown table left as text (its ``|---|---|`` row, or the dashes smartquotes made of it);
- a box of the text that is cut (``overflow-x: hidden``), or scrolls sideways with no cue;
- a figure whose smallest text is under 8 px at 390 px.

The pages are served and read exactly as the built book is (``check``: the server, Chromium at 1280
and 390 px, ``book.js`` from ``book/_static``); pages under ``chapters/`` are read at both widths.
Needs Playwright and Debian's Chromium (``/usr/bin/chromium`` or ``$CHROMIUM``), as the check does:
skipped without them.
"""
import importlib.util
import os
import shutil

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("playwright") is None or not os.path.exists(CHROMIUM),
    reason="the browser check needs Playwright and Chromium (pip install -r book/requirements.txt; apt-get install chromium)")


def load_check():
    spec = importlib.util.spec_from_file_location("check_browser", os.path.join(ROOT, "book", "check_browser.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A Markdown table as myst-nb left it before the notebooks' Markdown outputs were read as MyST: the
# lines in a paragraph, its separator row among them.
RAW_TABLE = "<p>| model | loss |\n|---|---|\n| ALBERT | 5.1 |</p>"
PAGES = {
    "raw_table": RAW_TABLE,
    "raw_table_smartquotes": "<p>| model | loss |\n|\u2013\u2013|\u2013\u2013|\n| ALBERT | 5.1 |</p>",
    "table": "<table><tr><th>model</th><th>loss</th></tr><tr><td>ALBERT</td><td>5.1</td></tr></table>",
    "table_in_code": "<pre><code>| model | loss |\n|---|---|\n</code></pre>",
    # a box 300 px wide holding 800 px, cut: nothing shows the rest, with or without book.js
    "cut": '<div style="overflow-x: hidden; width: 300px"><div style="width: 800px">a wide equation</div></div>',
    # the same box scrolling: book.js puts its cue before it; without book.js nothing says it scrolls
    "scrolls": '<div style="overflow-x: auto; width: 300px"><div style="width: 800px">a wide table</div></div>',
    # a figure 600 px wide in its own pixels (taken for a figure), shown 300 px wide: text ~5.2 px
    "small_figure": '<img src="../figure.png" style="width: 300px">',
    # shown 470 px wide in a box that scrolls (book.js cues it): text ~8.2 px
    "figure": '<div style="overflow-x: auto; width: 350px"><img src="../figure.png" style="width: 470px; max-width: none"></div>',
}


def page(body, book_js):
    script = '<script src="../_static/book.js"></script>' if book_js else ""
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">{script}</head>'
            f'<body style="margin: 0"><article style="padding: 0 16px">{body}</article></body></html>')


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    """The check's problems on every page of PAGES, with book.js (``<name>.html``) and without
    (``<name>_bare.html``)."""
    import matplotlib.image

    site = tmp_path_factory.mktemp("site")
    os.makedirs(site / "chapters")
    os.makedirs(site / "_static")
    shutil.copy(os.path.join(ROOT, "book", "_static", "book.js"), site / "_static" / "book.js")
    matplotlib.image.imsave(site / "figure.png", np.zeros((40, 600)), cmap="gray")
    for name, body in PAGES.items():
        (site / "chapters" / f"{name}.html").write_text(page(body, True), encoding="utf-8")
        (site / "chapters" / f"{name}_bare.html").write_text(page(body, False), encoding="utf-8")
    check = load_check()
    return check.check(str(site), str(site / "screens"), CHROMIUM)[1]


def messages(problems, name):
    return "\n".join(problems.get(f"chapters/{name}.html", []))


@pytest.mark.parametrize("name", ["raw_table", "raw_table_smartquotes"])
def test_a_markdown_table_left_as_text_fails(problems, name):
    assert "[desktop] Markdown table left as text: \"| model | loss |" in messages(problems, name)


@pytest.mark.parametrize("name", ["table", "table_in_code"])
def test_a_rendered_table_or_one_in_code_passes(problems, name):
    assert messages(problems, name) == ""


def test_a_cut_box_fails_with_or_without_book_js(problems):
    for name in ("cut", "cut_bare"):
        assert "[phone] hidden overflow: div (800 px in 300 px) is cut, nothing shows the rest" in messages(problems, name)


def test_a_box_that_scrolls_without_a_cue_fails_and_passes_with_book_js_cue(problems):
    bare = messages(problems, "scrolls_bare")
    assert "[phone] hidden overflow: div (800 px in 300 px) scrolls sideways with no cue that it does" in bare
    assert "book.js is not loaded" in bare
    assert messages(problems, "scrolls") == ""


def test_figure_text_under_8_px_at_phone_width_fails(problems):
    from minishare.analysis import figure_style     # drawn WIDTH inches wide, text of at least FONT_SIZE - 1 points
    text = 300 * (figure_style.FONT_SIZE - 1) / (72 * figure_style.WIDTH)
    assert f"[phone] figure text {text:.1f} px (under 8 px): ../figure.png shown 300 px wide" in messages(problems, "small_figure")
    assert messages(problems, "figure") == ""

