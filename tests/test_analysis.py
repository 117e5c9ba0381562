"""Measurements and figures (``minishare.analysis``): ALBERT's Figure 1 against NumPy written out
here, memory against counts worked by hand (4 bytes a float32, Adam's two moments, a graph small
enough to list its saved arrays), and the figures' labels and files.

Tiny models throughout: V = 50, E = 16, H = 32, 2 heads, FFN 64, T <= 8. Time is never asserted.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import minishare
from minishare import backend, functional as F, optim
from minishare.analysis import count_parameters, layerwise, memory
from minishare.models import AlbertConfig, AlbertForPreTraining, AlbertModel
from minishare.nn import FFN, MultiHeadAttention, Parameter

V = 50


def config(**overrides):
    fields = dict(vocab_size=V, embedding_size=16, hidden_size=32, num_hidden_layers=4,
                  num_attention_heads=2, intermediate_size=64, max_position_embeddings=16)
    return AlbertConfig(**{**fields, **overrides})


def pretraining_model(seed=0, **overrides):
    minishare.manual_seed(seed)
    return AlbertForPreTraining(config(**overrides))


def perturb(model, seed=1, scale=0.3):
    """Move every parameter off its initial value so that states are O(1) and differ by token."""
    rng = np.random.default_rng(seed)
    for p in model.parameters():
        p.data = backend.asarray(p.numpy() + scale * rng.standard_normal(p.shape)).astype(p.dtype)
    return model


def make_batch(lengths, T, seed=0):
    """A pre-training batch (host arrays) whose row i has ``lengths[i]`` real tokens, then padding."""
    rng = np.random.default_rng(seed)
    B = len(lengths)
    mask = (np.arange(T)[None, :] < np.array(lengths)[:, None]).astype(np.int64)   # (B, T)
    labels = np.full((B, T), -100, dtype=np.int64)
    labels[:, 1] = rng.integers(0, V, B)
    return {"input_ids": rng.integers(1, V, (B, T)) * mask,                          # pad id 0
            "attention_mask": mask,
            "token_type_ids": (np.arange(T)[None, :] >= 3).astype(np.int64) * mask,
            "labels": labels,
            "sentence_order_label": rng.integers(0, 2, B)}


def direct_transitions(model, batches, use_mask=True):
    """Figure 1 written out in NumPy: per-token distance and arccos of the cosine between
    consecutive hidden states, averaged over the tokens kept (all of them if not ``use_mask``)."""
    distances, angles = [], []
    for batch in batches:
        out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                    token_type_ids=batch["token_type_ids"], output_hidden_states=True)
        hs = [h.numpy().astype(np.float64) for h in out.hidden_states]              # N+1 × (B, T, H)
        keep = batch["attention_mask"] == 1 if use_mask else np.ones(hs[0].shape[:2], bool)
        d = [np.linalg.norm(b - a, axis=-1)[keep] for a, b in zip(hs, hs[1:])]
        cos = [np.sum(a * b, -1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
               for a, b in zip(hs, hs[1:])]
        distances.append(d)
        angles.append([np.degrees(np.arccos(np.clip(c, -1, 1)))[keep] for c in cos])
    n_layers = len(distances[0])
    return ([np.concatenate([d[l] for d in distances]).mean() for l in range(n_layers)],
            [np.concatenate([a[l] for a in angles]).mean() for l in range(n_layers)])


# --- ALBERT Figure 1 --------------------------------------------------------------------------------
def test_layer_transitions_equal_numpy_over_non_padding_tokens_of_all_batches():
    model = perturb(pretraining_model())
    batches = [make_batch([8, 5, 2], T=8, seed=0), make_batch([6, 3], T=6, seed=1)]
    result = layerwise.layer_transitions(model, batches)
    l2, degrees = direct_transitions(model, batches)
    assert len(result["l2"]) == len(result["cosine_degrees"]) == 4
    np.testing.assert_allclose(result["l2"], l2, rtol=1e-9)
    np.testing.assert_allclose(result["cosine_degrees"], degrees, rtol=1e-7)
    # each token weighs the same: not the mean of the two batches' means
    per_batch = [direct_transitions(model, [b])[0] for b in batches]
    assert not np.allclose(result["l2"], np.mean(per_batch, axis=0), rtol=1e-4)


def test_layer_transitions_ignore_padding():
    model = perturb(pretraining_model())
    batch = make_batch([8, 4, 2], T=8)
    result = layerwise.layer_transitions(model, [batch])
    # what a padded position holds must not matter (attention never reads it, the mean skips it)
    other = {**batch, "input_ids": np.where(batch["attention_mask"] == 1, batch["input_ids"], 7),
             "token_type_ids": np.where(batch["attention_mask"] == 1, batch["token_type_ids"], 1)}
    again = layerwise.layer_transitions(model, [other])
    np.testing.assert_allclose(again["l2"], result["l2"], rtol=1e-9)
    np.testing.assert_allclose(again["cosine_degrees"], result["cosine_degrees"], rtol=1e-9)
    # and padded positions would change the mean if they were counted
    unmasked_l2, _ = direct_transitions(model, [batch], use_mask=False)
    assert not np.allclose(result["l2"], unmasked_l2, rtol=1e-3)


def test_identity_layers_move_nothing():
    """Pre-LN: x <- x + f(LN(x)). With the output projections of attention and FFN zeroed (weights
    and biases), f = 0 exactly, so each layer returns its input: distance 0 and angle 0."""
    minishare.manual_seed(0)
    model = perturb(AlbertModel(config(norm_position="pre", sharing="not-shared")))
    before = layerwise.layer_transitions(model, [make_batch([8, 5], T=8)])
    assert min(before["l2"]) > 1e-3                       # the construction below is what zeroes it
    for module in model.modules():
        output = (module.dense if isinstance(module, MultiHeadAttention)
                  else module.ffn_output if isinstance(module, FFN) else None)
        if output is not None:
            for p in (output.weight, output.bias):
                p.data = backend.xp.zeros_like(p.data)
    result = layerwise.layer_transitions(model, [make_batch([8, 5], T=8)])
    assert result == {"l2": [0.0] * 4, "cosine_degrees": [0.0] * 4}


def test_layer_transitions_restore_training_mode_and_reject_all_padding():
    model = pretraining_model(hidden_dropout_prob=0.1)
    model.train()
    batch = make_batch([3], T=4)
    first = layerwise.layer_transitions(model, [batch])
    assert model.training and all(m.training for m in model.modules())
    assert layerwise.layer_transitions(model, [batch]) == first   # eval mode: no dropout draws
    with pytest.raises(ValueError, match="non-padding"):
        layerwise.layer_transitions(model, [{**batch, "attention_mask": 0 * batch["attention_mask"]}])


# --- memory -----------------------------------------------------------------------------------------
def loss_of(batch):
    return lambda model: model(**batch).loss


def test_activation_bytes_of_a_graph_listed_by_hand():
    """loss = Σ x⊙x + Σ x@W + Σ linear(x[1:], W2): Mul saves x twice, MatMul x and W, Linear a
    view into x (rows 1..3, which keeps all of x alive) and W2; GetItem, Sum and Add save only
    shapes and the slice. So the graph holds one buffer of its own: x's 48 bytes (4 × 3
    float32); W and W2 (24 and 12 bytes) are the parameters'."""
    x = minishare.tensor(np.arange(12, dtype=np.float32).reshape(4, 3), requires_grad=True)
    w = Parameter(np.ones((3, 2), dtype=np.float32))
    w2 = Parameter(np.ones((1, 3), dtype=np.float32))
    loss = (x * x).sum() + (x @ w).sum() + F.linear(x[1:], w2).sum()
    assert memory.activation_bytes(loss, exclude=[w.data, w2.data]) == 48
    assert memory.activation_bytes(loss) == 48 + 24 + 12


def test_memory_breakdown_counts_bytes_of_each_kind():
    model = pretraining_model(sharing="not-shared")
    optimizer = optim.AdamW(model.parameters())
    breakdown = memory.memory_breakdown(model, optimizer, loss_of(make_batch([8, 5, 2], T=8)))
    n = count_parameters(model)
    assert breakdown["parameters"] == 4 * n                    # float32
    assert breakdown["gradients"] == 4 * n                     # every parameter is used by the loss
    assert breakdown["optimizer"] == 2 * 4 * n                 # Adam's two moments per parameter
    assert breakdown["activations"] > 0
    assert breakdown["total"] == sum(breakdown[k] for k in
                                     ("parameters", "gradients", "optimizer", "activations"))
    assert memory.memory_breakdown(model.double(), optim.AdamW(model.parameters()),
                                   loss_of(make_batch([8], T=8)))["parameters"] == 8 * n


def test_adamw_state_is_two_arrays_per_parameter():
    """The keys the 2 × parameters expectation rests on, read from the optimizer itself."""
    model = pretraining_model()
    optimizer = optim.AdamW(model.parameters())
    loss_of(make_batch([8, 3], T=8))(model).backward()
    optimizer.step()
    array_keys = {k for s in optimizer.state.values() for k, v in s.items() if backend.is_array(v)}
    assert array_keys == {"exp_avg", "exp_avg_sq"}
    assert len(optimizer.state) == len(list(model.parameters()))


def test_sharing_shrinks_weights_gradients_and_state_but_not_activations():
    batch = make_batch([8, 5, 2], T=8)
    sizes = {}
    for sharing in ("not-shared", "all-shared"):
        model = pretraining_model(sharing=sharing)
        sizes[sharing] = memory.memory_breakdown(model, optim.AdamW(model.parameters()), loss_of(batch))
    ratio = {k: sizes["all-shared"][k] / sizes["not-shared"][k] for k in sizes["all-shared"]}
    assert ratio["parameters"] < 0.5
    assert ratio["gradients"] < 0.5
    assert ratio["optimizer"] < 0.5
    assert 0.9 <= ratio["activations"] <= 1.1


def test_activations_grow_by_the_same_amount_per_layer():
    """Each position saves the same arrays, shared or not: activations are affine in N."""
    batch = make_batch([8, 5], T=8)
    act = {}
    for N in (1, 2, 4):
        model = pretraining_model(sharing="all-shared", num_hidden_layers=N)
        breakdown = memory.memory_breakdown(model, optim.AdamW(model.parameters()), loss_of(batch))
        act[N] = breakdown["activations"]
    per_layer = act[2] - act[1]
    assert per_layer > 0
    assert act[4] - act[2] == pytest.approx(2 * per_layer, rel=0.01)


def test_measuring_changes_nothing():
    model = pretraining_model()
    optimizer = optim.AdamW(model.parameters())
    before = [p.numpy().copy() for p in model.parameters()]
    loss_fn = loss_of(make_batch([8, 5], T=8))
    memory.memory_breakdown(model, optimizer, loss_fn)
    times = memory.step_time(model, loss_fn, optimizer, repeats=2, warmup=1)
    assert set(times) == {"train", "inference"} and all(t > 0 for t in times.values())
    for p, value in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), value)
        assert p.grad is None
    assert optimizer.state == {}
    with pytest.raises(ValueError, match="repeats"):
        memory.step_time(model, loss_fn, optimizer, repeats=0)


def test_depth_sweep_rows():
    batch = make_batch([6, 4], T=6)

    def make_model(N, sharing):
        return pretraining_model(sharing=sharing, num_hidden_layers=N)

    sweep = memory.depth_sweep(make_model, [1, 3], loss_of(batch), repeats=1, warmup=0)
    assert list(sweep) == ["not-shared", "all-shared"]
    for sharing, rows in sweep.items():
        assert [r["depth"] for r in rows] == [1, 3]
        for r in rows:
            assert r["sharing"] == sharing
            assert r["parameters"] == 4 * r["n_parameters"]
            assert r["n_parameters"] == count_parameters(make_model(r["depth"], sharing))
            assert r["train"] > 0 and r["inference"] > 0
    shared, unshared = sweep["all-shared"], sweep["not-shared"]
    assert shared[0]["n_parameters"] == shared[1]["n_parameters"] == unshared[0]["n_parameters"]
    assert unshared[1]["n_parameters"] > shared[1]["n_parameters"]
    assert [r["activations"] for r in shared] == [r["activations"] for r in unshared]
    # the rows are what the figures take
    pytest.importorskip("matplotlib")
    from minishare.analysis import memory_figures
    step_panel = memory_figures.plot_step_time([1, 3], sweep).axes[0]
    assert list(step_panel.get_lines()[0].get_ydata()) == [r["train"] for r in unshared]
    memory_bars = memory_figures.plot_memory([(r["name"], r) for rows in sweep.values() for r in rows])
    assert len(memory_bars.axes[0].patches) == 4 * 4            # 4 configurations × 4 kinds


# --- figures ----------------------------------------------------------------------------------------
def labelled(fig):
    """Every panel has a title (or the figure a suptitle) and both axis labels."""
    axes = [ax for ax in fig.axes if ax.axison]
    assert axes
    for ax in axes:
        assert ax.get_title() or fig.get_suptitle()
        assert ax.get_xlabel() and ax.get_ylabel()
    return axes


def test_figures_are_titled_and_labelled():
    mpl = pytest.importorskip("matplotlib")
    from minishare.analysis import layerwise_figure, memory_figures, params_figures, plan_figure
    from minishare.sharing import Plan
    figures = {
        "bars": params_figures.plot_param_bars([("albert-base", 11_683_584, "12M"),
                                                ("bert-base", 108_891_648, "108M")], "Table 1", log=True),
        "vs": params_figures.plot_params_vs([64, 128], {"not-shared": [87e6, 89e6], "all-shared": [10e6, 12e6]},
                                            "embedding size E", "Parameters vs E"),
        "layers": layerwise_figure.plot_layer_transitions({
            "all-shared (trained)": {"l2": [1, 2, 3], "cosine_degrees": [4, 5, 6]},
            "all-shared (untrained)": {"l2": [1, 1, 1], "cosine_degrees": [2, 2, 2]}}),
        "memory": memory_figures.plot_memory([("a", {"parameters": 2 ** 20, "gradients": 2 ** 20,
                                                      "optimizer": 2 ** 21, "activations": 2 ** 22})]),
        "time": memory_figures.plot_step_time([2, 4], {"all-shared": [{"train": 0.1, "inference": 0.05},
                                                                      {"train": 0.2, "inference": 0.1}]}),
        "plans": plan_figure.plot_plans({"cycle-rev": Plan.build("cycle-rev", 6, 3),
                                         "shared-ffn": Plan.build("shared-ffn", 4)}),
    }
    for name, fig in figures.items():
        assert isinstance(fig, mpl.figure.Figure), name
        assert labelled(fig), name
    # bar heights: ours exact, the paper's parsed from "12M"
    ax = figures["bars"].axes[0]
    heights = [patch.get_height() for patch in ax.patches]
    assert heights == pytest.approx([11.683584, 108.891648, 12.0, 108.0])
    assert ax.get_yscale() == "log"
    # the memory bars are stacked in MiB: 1 + 1 + 2 + 4 = 8
    top = max(p.get_y() + p.get_height() for p in figures["memory"].axes[0].patches)
    assert top == pytest.approx(8.0)
    assert len([ax for ax in figures["plans"].axes if ax.axison]) == 2


def test_convergence_smooths_and_marks_held_out_points():
    pytest.importorskip("matplotlib")
    from minishare.analysis import training_figures
    assert training_figures.moving_average([1.0, 2.0, 3.0, 4.0], 2) == [1.0, 1.5, 2.5, 3.5]
    history = [{"step": s, "wall_clock": 0.1 * s, "loss": 5.0 - 0.1 * s} for s in range(1, 21)]
    history[9]["eval_loss"], history[19]["eval_loss"] = 4.2, 3.3
    fig = training_figures.plot_convergence({"Cycle": history, "Vanilla": history[:5]}, x="wall_clock", window=4)
    ax = fig.axes[0]
    assert "moving average over 4 steps" in ax.get_title()
    assert "seconds" in ax.get_xlabel() or "(s)" in ax.get_xlabel()
    held_out = [c for c in ax.containers if "held-out" in c.get_label()]    # error bars: mean, min–max
    assert len(held_out) == 1 and list(held_out[0].lines[0].get_ydata()) == [4.2, 3.3]
    smoothed = [line for line in ax.get_lines() if line.get_label() == "Cycle"][0]
    assert list(smoothed.get_ydata())[:2] == pytest.approx([4.9, 4.85])
    with pytest.raises(ValueError, match="no rows"):
        training_figures.plot_convergence({"Cycle": history}, y="perplexity")


def test_convergence_over_seeds_draws_the_mean_and_a_min_max_band():
    mpl = pytest.importorskip("matplotlib")
    from minishare.analysis import training_figures
    seeds = [[{"step": s, "loss": base + s, "eval_loss": base} for s in (1, 2, 3)] for base in (0.0, 3.0, 6.0)]
    fig = training_figures.plot_convergence({"all-shared": seeds, "not-shared": seeds[:2]}, window=1)
    ax = fig.axes[0]
    mean = [line for line in ax.get_lines() if line.get_label() == "all-shared"][0]
    assert list(mean.get_ydata()) == pytest.approx([4.0, 5.0, 6.0])          # (1+4+7)/3, ...
    bands = [c for c in ax.collections if isinstance(c, mpl.collections.PolyCollection)]
    ys = bands[0].get_paths()[0].vertices[:, 1]
    assert min(ys) == pytest.approx(1.0) and max(ys) == pytest.approx(9.0)   # min of seed 0, max of seed 2
    series = [line for line in ax.get_lines() if line.get_label() in ("all-shared", "not-shared")]
    assert len({(line.get_linestyle(), line.get_marker()) for line in series}) == 2
    fig.draw_without_rendering()                                             # lay out, then measure
    legend = fig.legends[0]
    assert legend.get_window_extent().y1 <= ax.get_window_extent().y0       # below the data, not over it
    texts = [t.get_text() for t in legend.get_texts()]                       # each configuration once,
    assert texts[:2] == ["all-shared", "not-shared"] and len(texts) == 3     # held-out markers said once
    assert "held-out" in texts[2]
    assert "3 seed" in ax.get_title() or "2/3 seed" in ax.get_title()


def test_save_figure_writes_png_and_svg(tmp_path):
    pytest.importorskip("matplotlib")
    from minishare.analysis import figure_style, params_figures
    fig = params_figures.plot_params_vs([1, 2], {"a": [1e6, 2e6]}, "depth N", "t")
    paths = figure_style.save_figure(fig, tmp_path / "sub" / "figure")
    assert paths == (str(tmp_path / "sub" / "figure.png"), str(tmp_path / "sub" / "figure.svg"))
    with open(paths[0], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(paths[1]) as f:
        assert "<svg" in f.read()
    assert sorted(os.listdir(tmp_path / "sub")) == ["figure.png", "figure.svg"]   # no temporaries
    with pytest.raises(ValueError, match="without suffix"):
        figure_style.save_figure(fig, tmp_path / "figure.png")


def test_import_needs_no_matplotlib():
    code = ("import sys, minishare, minishare.analysis.figure_style, minishare.analysis.training_figures, "
            "minishare.analysis.params_figures, minishare.analysis.memory_figures, minishare.analysis.plan_figure, "
            "minishare.analysis.memory, minishare.analysis.layerwise; assert 'matplotlib' not in sys.modules")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root,
                   env={**os.environ, "PYTHONPATH": root})


def test_band_keeps_the_mean_of_equal_seeds_inside_their_range():
    """Three seeds with the same value: the float mean (0.1 + 0.1 + 0.1) / 3 is one ulp above 0.1,
    which made the held-out error bar negative and matplotlib refuse the figure."""
    from minishare.analysis.figure_style import band
    from minishare.analysis.training_figures import plot_convergence
    mean, low, high = band([[0.1, 0.7], [0.1, 0.7], [0.1, 0.7]])
    assert low[0] <= mean[0] <= high[0] and low[1] <= mean[1] <= high[1]
    history = [{"step": 1, "loss": 1.0}, {"step": 2, "loss": 0.5, "eval_loss": 0.1}]
    plot_convergence({"a": [history, history, history]}, x="step", y="loss", eval_y="eval_loss")
