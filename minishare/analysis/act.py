"""Ponder time per token of a model with Adaptive Computation Time (Graves, 2016; Dehghani et al.,
2018, Sec. 2.2): how many steps of its shared layer each token took, ρ = N + R (N steps, remainder
R; ``minishare.nn.act``). ρ lies between 2 (halted after the first step, R = 1) and max_steps + 1."""
import numpy   # host-side summaries of the measured times

from minishare import backend
from minishare.tensor import Tensor, no_grad


def ponder_times(model, input_ids, decoder_input_ids=None, attention_mask=None):
    """The ponder time of every token, from one forward pass without gradients.

    An ``EncoderDecoderModel`` takes source ids (B, S), the decoder's input ids (B, T) (teacher
    forcing: BOS then the target) and the source's 1/0 ``attention_mask``; a ``DecoderLM`` takes
    ids (B, T) alone. Returns host float arrays {"encoder": (B, S), "decoder": (B, T)} (the LM:
    "decoder" only), NaN at padding (mask 0 in the source, ``pad_token_id`` in the decoder input).
    """
    if not getattr(model.config, "act", False):
        raise ValueError("ponder_times needs a model built with act=True (Adaptive Computation Time)")
    was_training = model.training
    model.eval()
    with no_grad():
        if decoder_input_ids is None:
            out = model(input_ids)
            records = {"decoder": (out.decoder_ponder, None)}
        else:
            out = model(input_ids, decoder_input_ids, attention_mask=attention_mask)
            keep = None if attention_mask is None else _host(attention_mask)
            target = _host(decoder_input_ids)
            records = {"encoder": (out.encoder_ponder, keep),
                       "decoder": (out.decoder_ponder, target != model.config.pad_token_id)}
    model.train(was_training)
    times = {}
    for name, (ponder, keep) in records.items():
        t = backend.to_numpy(ponder.ponder_time.data).astype(float)          # (B, T)
        times[name] = t if keep is None else numpy.where(keep.astype(bool), t, numpy.nan)
    return times


def _host(x):
    """A Tensor, a backend array or host data as a host NumPy array."""
    return x.numpy() if isinstance(x, Tensor) else backend.to_numpy(backend.asarray(x))


def mean_by_position(times):
    """Mean ponder time at each token position over the sequences long enough to have it:
    (B, T) with NaN at padding -> (T,)."""
    counts = (~numpy.isnan(times)).sum(axis=0)
    return numpy.where(counts > 0, numpy.nansum(times, axis=0) / numpy.maximum(counts, 1), numpy.nan)


def mean_by_token(times, ids, vocab):
    """Mean ponder time of each token identity: {symbol: (mean, count)} over the non-NaN positions
    of ``times`` (B, T), ``ids`` (B, T) indexing ``vocab``."""
    keep = ~numpy.isnan(times)
    result = {}
    for i in numpy.unique(ids[keep]):
        values = times[keep & (ids == i)]
        result[vocab[int(i)]] = (float(values.mean()), int(values.size))
    return result
