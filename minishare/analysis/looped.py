"""What a looped model costs at r iterations: parameters that do not grow with r, compute that
does, and the activations of truncated backpropagation, which grow with k, not r.

A looped model (``models.LoopedForTokenClassification``) is a plan whose depth is chosen at run
time (``sharing.looped_plan``): P + r·R + C positions served by P + R + C layers. So::

    parameters      F·V·H + (P + R + C)·layer + LayerNorms + adapter + head      (no r)
    MACs per token  (P + r·R + C)·(4H² + 2TH + 2HI) + r·2H² + H·L
    activations     outside + k · per_iteration

Parameters are counted by ``analysis.params.count_parameters`` (each shared tensor once); the
layers' MACs as ``analysis.flops`` counts them, the adapter A [s; e] (2H -> H) only with
``injection="concat"``, the head H -> L labels; only the last k iterations keep activations.

The activation model is measured, not derived: ``activation_model`` reads the bytes the graph
saves (``analysis.memory.activation_bytes``) at (r, k) = (2, 1) and (2, 2), so that "outside"
(embeddings, prelude, coda, head, loss) and one iteration's share are this autograd's own
numbers, and ``activations`` predicts any (r, k) from them; the tests check the prediction
against the measurement at other (r, k).
"""
from minishare.analysis import flops
from minishare.analysis.memory import activation_bytes
from minishare.checks import is_int
from minishare.errors import InvalidValue
from minishare.nn.looped import check_iterations

PARTS = ("prelude", "recurrent", "coda", "adapter", "classifier")


def macs_per_token(config, iterations, seq_len):
    """Forward multiply-accumulates per token of a ``LoopedConfig`` run for r = ``iterations`` on
    T = ``seq_len`` tokens, by part (``PARTS``) and ``"total"``. Only matrix products count, as in
    ``analysis.flops``; embeddings are lookups."""
    r, _ = check_iterations(iterations)
    if not is_int(seq_len) or seq_len < 1:
        raise InvalidValue(f"seq_len must be a positive int, got {seq_len!r}")
    H, I, T = config.hidden_size, config.intermediate_size, seq_len
    layer = 4 * H * H + 2 * T * H + 2 * H * I           # attention projections, scores, FFN
    parts = {"prelude": config.num_prelude_layers * layer,
             "recurrent": r * config.num_recurrent_layers * layer,
             "coda": config.num_coda_layers * layer,
             "adapter": r * 2 * H * H if config.injection == "concat" else 0,
             "classifier": H * config.num_labels}
    parts["total"] = sum(parts.values())
    return parts


def flops_per_token(config, iterations, seq_len, training=False):
    """FLOPs per token: 2 × MACs, times 3 for a training step (``analysis.flops``'s conventions).
    With truncated backpropagation a training step runs r iterations forward but only k backward;
    this is the untruncated count."""
    factor = flops.FLOPS_PER_MAC * (flops.TRAINING_FACTOR if training else 1)
    return factor * macs_per_token(config, iterations, seq_len)["total"]


def measured_activations(model, batch, iterations, backprop_iterations):
    """Bytes saved for backward by one training forward pass of ``model`` on ``batch`` (input ids
    and labels) at r = ``iterations``, k = ``backprop_iterations``, parameters excluded."""
    out = model(batch["input_ids"], labels=batch["labels"], iterations=iterations,
                backprop_iterations=backprop_iterations)
    return activation_bytes(out.loss, exclude=[p.data for p in model.parameters()])


def activation_model(model, batch):
    """{"outside", "per_iteration"}: the bytes a training step saves outside the loop, and those
    of each iteration that keeps its graph, measured at (r, k) = (2, 1) and (2, 2)."""
    one, two = (measured_activations(model, batch, 2, k) for k in (1, 2))
    return {"outside": one - (two - one), "per_iteration": two - one}


def activations(model_of_activations, iterations, backprop_iterations=None):
    """Predicted activation bytes at r iterations, the last k backpropagated: outside + k ·
    per_iteration. r itself does not enter: the first r − k iterations keep nothing."""
    _, k = check_iterations(iterations, backprop_iterations)
    return model_of_activations["outside"] + k * model_of_activations["per_iteration"]
