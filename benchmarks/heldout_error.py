"""How large is the held-out set's own sampling error, against the effects the ALBERT comparisons
measure? A calibration, not a benchmark of speed: an interval is only as narrow as the
held-out sample lets it be, and a reproduction should say how much of it that sample is.

For each seed, two trained arms of the full run (default: all-shared and not-shared, N = 4) are
evaluated on that seed's held-out MLM tokens, the same tokens for both, as the comparison does.
Printed per seed: the masked tokens and sequences, each arm's held-out loss, their difference,
and the standard error of that difference from the held-out sample alone (the per-sequence sums
of the per-token differences, so tokens of one sequence are not taken as independent). Then the
spread over seeds of the differences, which is what the claim's interval is made of.

    python benchmarks/heldout_error.py                       # after `python -m minishare reproduce`
    python benchmarks/heldout_error.py --arms not-shared shared-ffn --runs book/figures/runs
"""
import argparse
import json
import os

import numpy

from minishare import checkpoint
from minishare.run.build import corpus_documents, load_tokenizer, make_task
from minishare.tasks import IGNORE_INDEX
from minishare.tensor import no_grad


def per_token_losses(model, task):
    """(per-token held-out MLM losses (P,), the sequence each token is in (P,)) on the task's held-out
    batches of its own objective, the tokens ``PretrainingTask.evaluate`` averages."""
    losses, sequences, offset = [], [], 0
    with no_grad():
        for batch in task.eval_sets[task.objective]:
            masked = batch["labels"] != IGNORE_INDEX                                # (B, T)
            out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        token_type_ids=batch["token_type_ids"], mlm_positions=numpy.flatnonzero(masked))
            logits = out.prediction_logits.numpy().astype(numpy.float64)          # (P, V)
            targets = batch["labels"][masked]                                       # (P,)
            shifted = logits - logits.max(axis=-1, keepdims=True)
            log_z = numpy.log(numpy.exp(shifted).sum(axis=-1))
            losses.append(log_z - shifted[numpy.arange(len(targets)), targets])
            rows, _ = numpy.nonzero(masked)
            sequences.append(rows + offset)
            offset += batch["labels"].shape[0]
    return numpy.concatenate(losses), numpy.concatenate(sequences)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="book/figures/runs")
    parser.add_argument("--arms", nargs=2, default=("all-shared", "not-shared"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args()
    differences = []
    print("seed  tokens  sequences  " + "  ".join(f"{a:>12s}" for a in args.arms) + "  a − b   SE (held-out)")
    for seed in args.seeds:
        folders = [os.path.join(args.runs, f"albert-{arm}-sop-s{seed}") for arm in args.arms]
        with open(os.path.join(folders[0], "request.json"), encoding="utf-8") as f:
            run = json.load(f)                                  # the run's own data settings
        documents = corpus_documents(run["corpus"])
        tokenizer = load_tokenizer(documents, run["vocab_size"], os.path.join(folders[0], "tokenizer.json"))
        task, _ = make_task("pretrain", seed, run["batch_size"], run["seq_len"], run["objective"], run["corpus"],
                            run["vocab_size"], tokenizer=tokenizer)
        (loss_a, seq), (loss_b, _) = [per_token_losses(checkpoint.load(os.path.join(f, "checkpoint.npz")), task)
                                      for f in folders]
        d = loss_a - loss_b
        per_sequence = numpy.bincount(seq, weights=d)                      # sum of d over each sequence
        n_seq = len(per_sequence)
        # the ratio estimator's standard error over sequences (a cluster sample of tokens)
        tokens = numpy.bincount(seq).astype(float)
        mean = d.mean()
        se = numpy.sqrt(n_seq / (n_seq - 1) * ((per_sequence - mean * tokens) ** 2).sum()) / tokens.sum()
        differences.append(mean)
        print(f"{seed:4d}  {len(d):6d}  {n_seq:9d}  {loss_a.mean():12.3f}  {loss_b.mean():12.3f}  "
              f"{mean:+.3f}  {se:.4f}")
    differences = numpy.array(differences)
    print(f"over seeds: mean difference {differences.mean():+.3f}, standard deviation {differences.std(ddof=1):.3f}, "
          f"standard error {differences.std(ddof=1) / numpy.sqrt(len(differences)):.3f}")


if __name__ == "__main__":
    main()
