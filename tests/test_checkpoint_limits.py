"""The checkpoint's read limits fit what the library itself writes (issue 34): a long run's history
and the largest model the library builds are read back, never refused as hostile."""
import math
import zipfile

import numpy as np
import pytest

from minishare import checkpoint, optim, sharing
from minishare.models import EncoderDecoderModel, TransformerConfig
from minishare.train import parameter_groups


def tiny(layers=1):
    return EncoderDecoderModel(TransformerConfig(vocab_size=8, hidden_size=4, num_attention_heads=1,
                                                 intermediate_size=4, num_hidden_layers=layers,
                                                 max_position_embeddings=8))


def adam_state(model):
    optimizer = optim.AdamW(parameter_groups(model, 0.01), lr=1e-3)
    for p in model.parameters():
        p.grad = p.data * 0 + 1
    optimizer.step()
    return optimizer.state_dict()


def history(steps, eval_every=100):
    """Rows as the Trainer writes them: ints for the step, floats elsewhere, eval_* now and then."""
    rng = np.random.default_rng(0)
    rows = []
    for step in range(1, steps + 1):
        row = {"step": step, "loss": float(rng.random()), "lr": 1e-3 * step / steps, "step_time": 0.01,
               "wall_clock": 0.01 * step, "mlm_accuracy": float(rng.random()), "grad_norm": float(rng.random())}
        if step % eval_every == 0:
            row.update(eval_loss=float(rng.random()), eval_mlm_accuracy=0.5)
        rows.append(row)
    return rows


def meta_bytes(path):
    with zipfile.ZipFile(path) as z:
        return z.getinfo("__meta__.npy").file_size


def test_a_90k_step_history_reads_back_exactly(tmp_path):
    path = str(tmp_path / "long.npz")
    rows = history(90_000)
    checkpoint.save(tiny(), path, {"step": len(rows), "history": rows})
    _, state = checkpoint.load(path, with_training_state=True)
    assert state["history"] == rows
    assert [type(row["step"]) for row in state["history"][:3]] == [int, int, int]


def test_the_metadata_does_not_grow_with_the_history(tmp_path):
    sizes = []
    for steps in (200, 20_000):
        path = str(tmp_path / f"{steps}.npz")
        checkpoint.save(tiny(), path, {"history": history(steps)})
        sizes.append(meta_bytes(path))
    assert sizes[1] - sizes[0] < 16, sizes          # the row count's digits only


@pytest.mark.parametrize("rows", [[{"step": 1, "note": "text"}], [{"step": True}], [{"a": 1}, {"a": 1.5}],
                                  [{"step": 2 ** 70}], [], [{1: 2.0}]])
def test_lists_that_are_not_tables_of_numbers_read_back_as_they_were(rows, tmp_path):
    path = str(tmp_path / "other.npz")
    checkpoint.save(tiny(), path, {"rows": rows})
    assert checkpoint.load(path, with_training_state=True)[1]["rows"] == rows


def test_the_largest_model_the_library_builds_fits_the_metadata_ceiling(tmp_path):
    """Building sharing.MAX_LAYERS layers a side takes minutes, so the metadata is measured at two
    smaller depths and extrapolated (it grows by the layers' parameter names), with a margin for
    the longer names of four-digit layer numbers."""
    sizes = {}
    for layers in (100, 200):
        path = str(tmp_path / f"{layers}.npz")
        model = tiny(layers)
        checkpoint.save(model, path, {"step": 1, "optimizer": adam_state(model), "history": history(10)})
        sizes[layers] = meta_bytes(path)
        checkpoint.load(path, with_training_state=True)
    per_layer = (sizes[200] - sizes[100]) / 100
    largest = sizes[100] + per_layer * (sharing.MAX_LAYERS - 100) * 1.2
    assert largest < checkpoint.MAX_META_BYTES, (math.ceil(largest), checkpoint.MAX_META_BYTES)


def test_a_table_whose_columns_do_not_fit_its_rows_is_refused(tmp_path):
    path = str(tmp_path / "edited.npz")
    checkpoint.save(tiny(), path, {"history": history(10)})
    with np.load(path) as npz:
        files = {key: npz[key] for key in npz.files}
    files["train/history/1"] = files["train/history/1"][:5]     # the loss column, cut
    with open(path, "wb") as f:
        np.savez(f, **files)
    with pytest.raises(checkpoint.CheckpointError, match="column 'loss' of a table of 10 rows"):
        checkpoint.load(path, with_training_state=True)
