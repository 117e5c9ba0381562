"""Count models of a token stream, the no-model baselines of a language model: unigram and
bigram counts of the training tokens, scored on the held-out windows the model is scored on."""
import numpy    # host-side counting of token ids, as minishare.tasks draws its batches

from minishare.run.build import make_task


# The bigram model's smoothing: every context gets ADD_K · V pseudo-counts, spread over the next
# token as the unigram distribution. Fixed in advance (the value often used for add-k), never
# chosen on held-out text: choosing it there would fit the baseline to the test.
ADD_K = 0.1


def count_models(train_ids, windows, vocab_size, k=ADD_K):
    """Held-out perplexity of two count models of the training stream ``train_ids``, scored on
    the targets the LM is scored on: every token of each held-out window (``windows``, (n, T))
    but the first, the bigram's context being the token before it in the window.

        unigram   p(w) = (c(w) + 1) / (N + V)                     (add-one, as the MLM's unigram)
        bigram    p(w | u) = (c(u, w) + k V p(w)) / (c(u) + k V)

    with c(u, w) the count of u followed by w in ``train_ids``, c(u) = Σ_w c(u, w) and N its
    length: the bigram's counts of a context seen c(u) times weigh c(u) / (c(u) + k V) against
    the unigram. Returns {"unigram": perplexity, "bigram": perplexity}."""
    V = vocab_size
    unigram = (numpy.bincount(train_ids, minlength=V) + 1.0) / (len(train_ids) + V)   # (V,)
    pairs, counts = numpy.unique(train_ids[:-1] * V + train_ids[1:], return_counts=True)
    context, target = windows[:, :-1].reshape(-1), windows[:, 1:].reshape(-1)          # (n (T - 1),)
    asked = context * V + target
    where = numpy.minimum(numpy.searchsorted(pairs, asked), len(pairs) - 1)
    c_pair = numpy.where(pairs[where] == asked, counts[where], 0)
    c_context = numpy.bincount(train_ids[:-1], minlength=V)[context]
    bigram = (c_pair + k * V * unigram[target]) / (c_context + k * V)
    return {"unigram": float(numpy.exp(-numpy.log(unigram[target]).mean())),
            "bigram": float(numpy.exp(-numpy.log(bigram).mean()))}


def count_baselines(corpus, vocab_size, seq_len, batch_size):
    """[(name, held-out perplexity)] of ``count_models`` on the task's own streams and windows
    (the same for every seed: the held-out split and its windows do not depend on it)."""
    task, V = make_task("lm", 0, batch_size, seq_len, corpus=corpus, vocab_size=vocab_size)
    ppl = count_models(task.train_ids, task.eval_windows, V)
    return [("unigram counts (add-one)", ppl["unigram"]),
            (f"bigram counts (add-{ADD_K:g} toward the unigram)", ppl["bigram"])]
