"""Objects that draw themselves in a notebook: a Plan as SVG, a config as a parameter table (both
registered with IPython's display formatters by the lab, the kernel's classes knowing nothing of
it), the autograd graph as SVG; and the notebooks' mode switch and result loader. The expected values are
worked out by hand from the papers' rules, never read back from the drawing code."""
import json
import os
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest

import minishare
from minishare import data
from minishare.analysis.display import config_html, plan_explorer, plan_svg, register_formatters
from minishare.analysis.graph import Graph
from minishare.experiments import course
from minishare.experiments.settings import FULL
from minishare.models import AlbertConfig, TransformerConfig
from minishare.sharing import Plan

SVG = "{http://www.w3.org/2000/svg}"


def boxes(svg):
    """(x, y, letter) of every set box of a plan's SVG: each rect is followed by its letter."""
    root = ET.fromstring(svg)
    children = list(root)
    out = []
    for rect, text in zip(children, children[1:]):
        if rect.tag == SVG + "rect" and text.tag == SVG + "text":
            out.append((float(rect.get("x")), float(rect.get("y")), text.text))
    return root, out


def column_bottom_to_top(found, x):
    return "".join(letter for _, _, letter in sorted((b for b in found if b[0] == x), key=lambda b: -b[1]))


def test_plan_svg_parses_and_reads_like_the_paper_bottom_to_top():
    root, found = boxes(plan_svg(Plan.build("cycle-rev", 7, 3)))
    assert root.tag == SVG + "svg"
    assert "N = 7" in root.find(SVG + "title").text and "3 sets" in root.find(SVG + "title").text
    xs = sorted({x for x, _, _ in found})
    assert len(xs) == 1                                    # one column: every component agrees
    assert column_bottom_to_top(found, xs[0]) == "ABCABCC"  # Takase & Kiyono's text, M = 3, N = 7


def test_plan_svg_names_each_component_when_they_differ():
    svg = plan_svg(Plan.build("shared-ffn", 4))
    root, found = boxes(svg)
    texts = [t.text for t in root.iter(SVG + "text")]
    assert "attention" in texts and "ffn" in texts and "every component" not in texts
    left, right = sorted({x for x, _, _ in found})
    assert column_bottom_to_top(found, left) == "ABCD"     # attention: a set per position
    assert column_bottom_to_top(found, right) == "AAAA"    # ffn: one set


def test_plan_svg_escapes_the_name():
    plan = Plan({"attention": [0, 1], "cross_attention": [0, 1], "ffn": [0, 0]}, name="<a & b>")
    root = ET.fromstring(plan_svg(plan))                  # would raise on an unescaped < or &
    assert "<a & b>" in root.find(SVG + "title").text


class _Rows(HTMLParser):
    """Rows of the first table of an HTML fragment, as lists of cell texts."""

    def __init__(self):
        super().__init__()
        self.rows, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(self._cell.strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def table(html):
    parser = _Rows()
    parser.feed(html)
    return {row[0]: int(row[1].replace(",", "")) for row in parser.rows[1:]}


def test_albert_config_html_breaks_down_albert_base_by_hand():
    V, E, H, I, P = 30000, 128, 768, 3072, 512
    rows = table(config_html(AlbertConfig.from_preset("albert-base")))
    assert rows["embedding: word (V × E)"] == V * E
    assert rows["embedding: position (P × E)"] == P * E
    assert rows["embedding: projection (E × H)"] == E * H + H
    assert rows["encoder: attention (1 set)"] == 4 * H * H + 4 * H + 2 * H
    assert rows["encoder: FFN (1 set)"] == 2 * H * I + I + H + 2 * H
    assert rows["heads: pooler (H × H)"] == H * H + H
    assert rows["total"] == 11_683_584                        # ALBERT Table 1: "12M"


def test_config_html_counts_sets_per_component():
    rows = table(config_html(AlbertConfig.from_preset("albert-base", sharing="shared-attention")))
    assert "encoder: attention (1 set)" in rows and "encoder: FFN (12 sets)" in rows
    H = 768
    assert rows["encoder: FFN (12 sets)"] == 12 * (2 * H * 4 * H + 4 * H + H + 2 * H)


def test_transformer_config_html_shows_both_stacks():
    config = TransformerConfig(vocab_size=100, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                               num_hidden_layers=4, num_unique_layers=2, sharing="cycle")
    html = config_html(config)
    rows = table(html)
    assert "M = 2" in html and "A B A B" in html
    assert rows["decoder cross-attention (2 sets)"] == 2 * (4 * 16 * 16 + 4 * 16 + 2 * 16)
    assert rows["total"] == minishare.count_parameters(config)


class _Formatter:
    """IPython's ``BaseFormatter`` as far as ``register_formatters`` uses it: ``for_type``."""

    def __init__(self):
        self.printers = {}

    def for_type(self, typ, func):
        self.printers[typ] = func


class _Shell:
    """A stand-in for an IPython shell: ``display_formatter.formatters`` by MIME type."""

    def __init__(self):
        self.display_formatter = type("DisplayFormatter", (), {})()
        self.display_formatter.formatters = {"image/svg+xml": _Formatter(), "text/html": _Formatter()}


def test_the_kernel_classes_do_not_draw_themselves():
    for cls in (Plan, AlbertConfig, TransformerConfig):
        assert not any(hasattr(cls, m) for m in ("_repr_svg_", "_repr_html_", "draw")), cls


def test_register_formatters_draws_plans_and_configs():
    shell = _Shell()
    assert register_formatters(shell) is True
    formatters = shell.display_formatter.formatters
    assert formatters["image/svg+xml"].printers == {Plan: plan_svg}
    assert formatters["text/html"].printers == {AlbertConfig: config_html, TransformerConfig: config_html}


def test_register_formatters_outside_ipython_does_nothing(monkeypatch):
    import sys
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert register_formatters() is False
    assert "IPython" not in sys.modules                   # and imports nothing to find out


def test_an_ipython_shell_draws_a_plan_and_a_config_that_end_a_cell(monkeypatch, tmp_path):
    """With IPython installed: its own shell, once registered with, formats a plan as the SVG and
    a config as the HTML."""
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))      # its profile and history, not the user's
    shell = interactiveshell.InteractiveShell.instance()
    try:
        assert register_formatters() is True               # the running shell, found by itself
        plan = Plan.build("cycle-rev", 7, 3)
        config = TransformerConfig(vocab_size=100, hidden_size=16, num_attention_heads=2,
                                   intermediate_size=32, num_hidden_layers=4)
        data, _ = shell.display_formatter.format(plan)
        assert data["image/svg+xml"] == plan_svg(plan)
        data, _ = shell.display_formatter.format(config)
        assert data["text/html"] == config_html(config)
    finally:
        interactiveshell.InteractiveShell.clear_instance()


def test_graph_shows_a_leaf_used_twice():
    w = minishare.tensor(np.ones(3), requires_grad=True)
    a, b = minishare.tensor(np.ones(3)), minishare.tensor(np.ones(3))
    y = (w * a).sum() + (w * b).sum()
    graph = Graph(y, names={"w": w, "a": a, "b": b})
    root = ET.fromstring(graph._repr_svg_())
    texts = [t.text for t in root.iter(SVG + "text")]
    assert "w ×2" in texts and "a" in texts and "b" in texts
    assert texts.count("Mul") == 2 and texts.count("Sum") == 2 and texts.count("Add") == 1
    assert len(root.findall(SVG + "line")) == 8               # 2 Mul × 2 inputs, 2 Sum, Add × 2


def test_graph_refuses_a_tensor_without_a_graph():
    with pytest.raises(ValueError, match="requires grad"):
        Graph(minishare.tensor(np.ones(2)))


def test_plan_explorer_without_widgets_returns_the_plan(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_widgets(name, *args, **kwargs):
        if name == "ipywidgets":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_widgets)
    assert plan_explorer(7, 3, "cycle") == Plan.build("cycle", 7, 3)
    assert plan_explorer(4, 3, "all-shared") == Plan.build("all-shared", 4)   # ALBERT names ignore M


@pytest.mark.parametrize("value, quick", [("1", True), ("yes", True), ("0", False), ("", False), (None, False)])
def test_quick_mode_switch(monkeypatch, value, quick):
    if value is None:
        monkeypatch.delenv(course.ENV, raising=False)
    else:
        monkeypatch.setenv(course.ENV, value)
    assert course.is_quick() is quick
    assert course.pick(quick="q", full="f") == ("q" if quick else "f")
    assert course.settings().quick is quick


def test_committed_result_loads_and_names_a_missing_file(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "result.json").write_text(json.dumps({"settings": {}, "result": {"x": [1, 2]}}))
    assert course.committed_result("demo", folder=str(tmp_path)) == {"x": [1, 2]}
    with pytest.raises(FileNotFoundError, match="nothing.*reproduce"):
        course.committed_result("nothing", folder=str(tmp_path))


def test_reveal_compares_a_guess():
    assert course.reveal(3.0, 2.0) == "the value: 2.0; your prediction 3.0 is off by 50%"
    hidden = course.reveal(None, 2.0)
    assert "2.0" not in hidden and "hidden" in hidden
    assert course.reveal("ndarray", "ndarray", "type").endswith("is right")


def test_experiment_quick_runs_in_a_fresh_folder_and_full_reads_the_committed_result(monkeypatch, tmp_path):
    monkeypatch.setattr(course.tempfile, "gettempdir", lambda: str(tmp_path))
    stale = tmp_path / "minishare-notebooks" / "nb" / "stale.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text("a run of an older library")
    monkeypatch.setenv(course.ENV, "1")
    result = course.experiment("plans", notebook="nb", progress=False)   # no training: counts and plans
    assert not stale.exists()                                          # the folder was emptied first
    assert json.loads(json.dumps(result)) == result                    # plain JSON, as result.json holds it
    monkeypatch.setenv(course.ENV, "0")
    (tmp_path / "plans").mkdir()
    from minishare.experiments import registry
    full = registry.get("plans").settings(FULL).key()
    (tmp_path / "plans" / "result.json").write_text(json.dumps({"settings": full, "result": {"from": "disk"}}))
    monkeypatch.setattr(course, "FIGURES", str(tmp_path))
    assert course.experiment("plans", notebook="nb") == {"from": "disk"}
    (tmp_path / "plans" / "result.json").write_text(json.dumps({"settings": {**full, "seeds": [0]},
                                                                "result": {"from": "disk"}}))
    with pytest.raises(ValueError, match="other settings.*--only plans"):
        course.experiment("plans", notebook="nb")     # an older run's result is not read as this one's
    with pytest.raises(ValueError, match="unknown experiment 'nope'.*albert_sharing"):
        course.experiment("nope", notebook="nb")


def test_every_committed_result_was_made_with_the_full_settings():
    """Full-mode notebooks load book/figures/<name>/result.json only when the settings it read are
    the library's FULL settings: a change to ``Settings`` must come with a rerun of what it changes.
    A result of an older data pipeline is still the last full run, even where the settings changed
    since (the next run's, planned before it); every page that shows it says that the full
    reproduction has to run again (``made_before``), which is checked here on the book's tables."""
    from minishare.experiments import book_cells, registry
    from minishare.experiments.book_cells import made_before
    from minishare.experiments.experiment import key_matches
    committed, stale = [], []
    for name, experiment in registry.experiments().items():
        path = os.path.join(course.FIGURES, name, "result.json")
        if os.path.exists(path):
            committed.append(name)
            saved = json.load(open(path, encoding="utf-8"))["settings"]
            if not key_matches(saved, experiment.settings(FULL), older_data=True) and not made_before(saved):
                stale.append(path)      # (one of an older pipeline is out of date anyway, and says so)
            if made_before(saved):
                assert made_before(saved) in book_cells.source_line(name, saved)
    assert len(committed) >= 15, committed
    assert not stale, f"made with other settings than FULL: {stale}"


def test_the_book_and_the_notebooks_read_every_committed_result_with_the_current_code(tmp_path):
    """The book renders each committed result's observations and tables with this library's code
    (book/_ext/measured.py), and a full-mode notebook its report and figures, also where the
    result predates a redesign: a function that assumes arms or fields an older result lacks would
    stop the book's build and the notebook."""
    pytest.importorskip("matplotlib")
    from minishare.experiments import registry
    for name, experiment in registry.experiments().items():
        path = os.path.join(course.FIGURES, name, "result.json")
        if os.path.exists(path):
            saved = json.load(open(path, encoding="utf-8"))
            assert all(isinstance(line, str) for line in experiment.observations(saved["result"])), name
            experiment.book_tables(saved["result"], saved["settings"], lambda claim_id: "")
            figures = experiment.figures(saved["result"], str(tmp_path / name))
            assert isinstance(experiment.report(saved["result"], figures), str), name


def test_a_result_of_an_older_data_pipeline_is_named_as_such():
    from minishare.experiments import registry
    from minishare.experiments.book_cells import made_before
    from minishare.experiments.experiment import key_matches
    view = registry.get("plans").settings(FULL)
    older = {**view.key(), "data_pipeline": data.PIPELINE_VERSION - 1}
    assert not key_matches(older, view) and key_matches(older, view, older_data=True)
    assert not key_matches({**older, "seeds": [0]}, view, older_data=True)
    assert made_before(view.key()) == ""
    assert made_before(older).startswith(f"Made by data pipeline {data.PIPELINE_VERSION - 1}, before version "
                                         f"{data.PIPELINE_VERSION} (")
