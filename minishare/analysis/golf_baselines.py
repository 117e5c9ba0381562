"""The competition's no-model baselines: count models of the training split's tokens, scored on a
held-out split as ``golf.score`` scores an entry (every target after the first [SEP] once)."""
import functools
import math

from minishare.analysis.count_lm import count_models
from minishare.golf import run as golf_run
from minishare.golf.entry import DEFAULT_VOCAB, parse_entry
from minishare.golf.score import held_out_stream


@functools.lru_cache(maxsize=None)
def baselines(corpus="grammar", split="test", draw=0):
    """{"unigram", "bigram"}: bits per byte of the count models of the training tokens on ``split``
    (``draw``: the grammar corpus's seed, ``golf.splits``)."""
    parts, tokenizer = golf_run.prepare(parse_entry({"model": {"vocab_size": DEFAULT_VOCAB}}), corpus, draw)
    train_ids, _ = held_out_stream(parts["train"], tokenizer)        # the same [SEP]-joined stream
    test_ids, text = held_out_stream(parts[split], tokenizer)
    perplexity = count_models(train_ids, test_ids[None, :], tokenizer.vocab_size)
    targets, n_bytes = len(test_ids) - 1, len(text.encode("utf-8"))
    # perplexity = exp(mean nats a target), so the stream's nats are ln(perplexity) · targets
    return {name: math.log(ppl) * targets / (math.log(2) * n_bytes) for name, ppl in perplexity.items()}
