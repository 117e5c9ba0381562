"""Sphinx configuration of the minishare textbook: MyST Markdown chapters, the course notebooks
executed by myst-nb in quick mode, an API reference from the docstrings, all offline.
Build it with ``bash book/build.sh``."""
import os
import sys

BOOK = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BOOK)
sys.path.insert(0, ROOT)                       # this checkout's minishare, for autodoc
sys.path.insert(0, os.path.join(BOOK, "_ext"))
# The notebooks' kernels inherit this environment: the course's quick mode, one BLAS thread.
os.environ.setdefault("MINISHARE_QUICK", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

project = "minishare: parameter sharing in Transformers, a textbook you can run"
author = "the minishare authors"
copyright = "the minishare authors"

extensions = [
    "myst_nb",                     # MyST Markdown and notebooks (includes myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",      # MathJax served from _static, never from a CDN
    "minishare_book",              # chapters' generated parts: notebooks, exercises, measured tables
]

exclude_patterns = ["_build", "_generated", "_ext", "figures", "README.md", "requirements.txt",
                    "notebooks/*.py", "**.ipynb_checkpoints"]
root_doc = "index"

# --- MyST and myst-nb -------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "cache"                   # run when the source changed, else reuse the outputs
nb_execution_cache_path = os.path.join(BOOK, "_build", ".jupyter_cache")
nb_execution_timeout = 600
nb_execution_raise_on_error = True            # a cell that raises fails the build
nb_execution_show_tb = True
nb_merge_streams = True
# A notebook's Markdown output (the experiments' tables and sentences, course.show_experiment) is
# read as MyST, like the chapters: myst-nb's default, CommonMark, has no tables, and printed them
# as raw "| a | b |" lines.
nb_render_markdown_format = "myst"

# --- the API reference ------------------------------------------------------------------------------
autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
add_module_names = False
# External names a docstring may mention whose documentation this offline build cannot link to:
nitpick_ignore_regex = [
    ("py:.*", r"(numpy|np|cupy|matplotlib)\..*"),   # NumPy/CuPy/matplotlib objects (no intersphinx offline)
]

# --- HTML -------------------------------------------------------------------------------------------
html_theme = "furo"
html_title = "minishare"
html_static_path = ["_static"]
html_css_files = ["book.css"]
html_js_files = ["book.js"]                   # says where a box scrolls sideways (book.css)
html_last_updated_fmt = None
html_show_sourcelink = False
html_theme_options = {"navigation_with_keys": True}
pygments_style = "friendly"
pygments_dark_style = "monokai"

# A notebook with a widget would make myst-nb load require.js and the widget manager from a CDN;
# the book is offline, so no widget JavaScript is loaded (the notebooks show a static fallback).
nb_ipywidgets_js = {}
