"""The tasks the training loop accepts (``minishare.tasks``): batches are a pure function of (seed,
index), have the shapes and label names the models expect, and evaluation reports the metrics
ALBERT's Table 5 and the seq2seq experiments need.

Metrics are checked with stand-in models whose answers are known by construction (an oracle that
copies, a classifier that always says 0), so the expected accuracies are counted here from the data.
"""
import math

import numpy as np
import pytest

import minishare
from minishare import backend, data
from minishare.data import seq2seq
from minishare.models import AlbertConfig, AlbertForPreTraining, DecoderLM, ModelOutput, TransformerConfig
from minishare.tasks import IGNORE_INDEX, LanguageModelingTask, PretrainingTask, Seq2SeqTask

B, T = 8, 32


def host(x):
    return x.numpy() if isinstance(x, minishare.Tensor) else backend.to_numpy(x)


def assert_batches_equal(a, b):
    assert set(a) == set(b)
    for key in a:
        assert np.array_equal(a[key], b[key]), key


@pytest.fixture(scope="module")
def corpus():
    documents = data.grammar_corpus(48, seed=5)
    tokenizer = data.Tokenizer.train([s for d in documents for s in d], vocab_size=80)
    train_docs, eval_docs = data.split_documents(documents, eval_fraction=0.25, seed=0)
    return train_docs, eval_docs, tokenizer


def pretraining(corpus, objective="sop", seed=3, n_eval_batches=2):
    train_docs, eval_docs, tokenizer = corpus
    return PretrainingTask(train_docs, eval_docs, tokenizer, objective, batch_size=B, max_seq_length=T,
                           seed=seed, n_eval_batches=n_eval_batches)


# --- ALBERT pre-training --------------------------------------------------------------------------
def test_pretraining_batches_are_a_function_of_seed_and_index(corpus):
    one, other = pretraining(corpus), pretraining(corpus)
    for index in (0, 1, 9, 40):                    # 40 lies in a later epoch
        assert_batches_equal(one.batch(index), other.batch(index))
    assert_batches_equal(one.batch(0), other.batch(0))   # going back to epoch 0 after a later one
    assert not np.array_equal(one.batch(0)["input_ids"], one.batch(1)["input_ids"])
    assert not np.array_equal(one.batch(0)["input_ids"], pretraining(corpus, seed=4).batch(0)["input_ids"])


@pytest.mark.parametrize("objective, label", [("sop", "sentence_order_label"), ("nsp", "next_sentence_label")])
def test_pretraining_batch_layout(objective, label, corpus):
    tokenizer = corpus[2]
    batch = pretraining(corpus, objective).batch(2)
    assert set(batch) == {"input_ids", "attention_mask", "token_type_ids", "labels", label}
    for key in ("input_ids", "attention_mask", "token_type_ids", "labels"):
        assert batch[key].shape == (B, T), key
        assert batch[key].dtype == np.int64, key
    assert batch[label].shape == (B,) and set(batch[label].tolist()) <= {0, 1}
    ids, mask, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]
    assert (ids[:, 0] == tokenizer.cls_id).all()
    assert ((0 <= ids) & (ids < tokenizer.vocab_size)).all()
    for row in range(B):                           # real tokens first, then padding
        n = int(mask[row].sum())
        assert (mask[row, :n] == 1).all() and (mask[row, n:] == 0).all()
        assert (ids[row, n:] == tokenizer.pad_id).all()
        assert ids[row, n - 1] == tokenizer.sep_id
        assert (labels[row, n:] == IGNORE_INDEX).all()
    targets = labels != IGNORE_INDEX
    assert targets.any()
    assert ((labels[targets] >= 5) & (labels[targets] < tokenizer.vocab_size)).all()   # no special token
    assert targets.sum() <= 0.3 * mask.sum()       # about 15% of the tokens are MLM targets


def test_pretraining_has_fresh_masks_every_epoch(corpus):
    task = pretraining(corpus)
    first = task.batch(0)["input_ids"]
    later = [task.batch(i)["input_ids"] for i in range(1, 200)]
    assert not any(np.array_equal(first, b) for b in later)


def test_pretraining_draws_each_epoch_once_when_training_forward(corpus):
    """Training asks for batches 0, 1, 2, ...: each epoch's examples are drawn once, not again for
    every later step (which made long runs quadratic in the number of epochs)."""
    task = pretraining(corpus)
    seeds, draw = [], task.train.examples

    def counting(seed):
        seeds.append(seed)
        return draw(seed)

    task.train.examples = counting
    for index in range(60):
        task.batch(index)
    assert len(seeds) > 2                          # several epochs were crossed
    assert len(seeds) == len(set(seeds))


def test_pretraining_needs_a_full_batch(corpus):
    train_docs, eval_docs, tokenizer = corpus
    task = PretrainingTask(train_docs[:2], eval_docs, tokenizer, batch_size=1000, max_seq_length=T)
    with pytest.raises(ValueError, match="batch_size=1000"):
        task.batch(0)


def small_albert(vocab_size):
    minishare.manual_seed(0)
    return AlbertForPreTraining(AlbertConfig(
        vocab_size=vocab_size, embedding_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=T))


def test_pretraining_loss_is_mlm_plus_sop(corpus):
    task = pretraining(corpus)
    loss, metrics = task.loss(small_albert(corpus[2].vocab_size), task.batch(0))
    assert set(metrics) == {"mlm_loss", "sop_loss"}
    assert loss.item() == pytest.approx(metrics["mlm_loss"].item() + metrics["sop_loss"].item(), rel=1e-6)
    assert metrics["sop_loss"].item() == pytest.approx(math.log(2), abs=0.05)   # an untrained binary head


@pytest.mark.parametrize("objective", ["sop", "nsp"])
def test_pretraining_evaluate_on_an_untrained_model(objective, corpus):
    """Both SOP and NSP accuracies whatever the objective; an untrained MLM is near ln V."""
    V = corpus[2].vocab_size
    model = small_albert(V).eval()
    metrics = pretraining(corpus, objective).evaluate(model)
    assert {"sop_accuracy", "nsp_accuracy", "mlm_loss", "mlm_accuracy"} <= set(metrics)
    for key in ("sop_accuracy", "nsp_accuracy", "mlm_accuracy"):
        assert 0 <= metrics[key] <= 1, key
    assert metrics["mlm_loss"] == pytest.approx(math.log(V), abs=0.1)
    assert pretraining(corpus, objective).evaluate(model) == metrics      # deterministic in eval mode


class ConstantPretrainer:
    """Knows every MLM answer (reads the labels) and always says sentence class 0; its MLM loss is
    a fixed 0.5. Like AlbertForPreTraining, it scores only the ``mlm_positions`` it is given
    (row p: flat position mlm_positions[p])."""

    def __call__(self, input_ids, attention_mask=None, token_type_ids=None, labels=None,
                 sentence_order_label=None, mlm_positions=None):
        labels = np.asarray(labels)
        V = int(labels.max()) + 1
        assert mlm_positions is not None and (labels.reshape(-1)[mlm_positions] != IGNORE_INDEX).all()
        logits = np.zeros((len(mlm_positions), V))
        logits[np.arange(len(mlm_positions)), labels.reshape(-1)[mlm_positions]] = 1.0
        sop = np.tile([1.0, 0.0], (labels.shape[0], 1))
        return ModelOutput(prediction_logits=minishare.tensor(logits), sop_logits=minishare.tensor(sop),
                           mlm_loss=minishare.tensor(0.5))


def test_pretraining_metrics_counted_by_hand(corpus):
    task = pretraining(corpus)
    metrics = task.evaluate(ConstantPretrainer())
    for name, label in (("sop", "sentence_order_label"), ("nsp", "next_sentence_label")):
        labels = np.concatenate([batch[label] for batch in task.eval_sets[name]])
        assert 0 < (labels == 0).mean() < 1
        assert metrics[f"{name}_accuracy"] == pytest.approx((labels == 0).mean())
    assert metrics["mlm_accuracy"] == 1.0
    assert metrics["mlm_loss"] == pytest.approx(0.5)


# --- sequence to sequence -------------------------------------------------------------------------
def copy_task(seed=0, n_eval=50):
    return Seq2SeqTask(seq2seq.CopyTask(min_length=1, max_length=5, n_symbols=6), batch_size=B,
                       seed=seed, n_eval=n_eval)


def test_seq2seq_batches_are_a_function_of_seed_and_index():
    assert_batches_equal(copy_task().batch(3), copy_task().batch(3))
    assert not np.array_equal(copy_task().batch(3)["src"], copy_task().batch(4)["src"])
    assert not np.array_equal(copy_task().batch(3)["src"], copy_task(seed=1).batch(3)["src"])
    assert copy_task().eval_pairs == copy_task().eval_pairs


def test_seq2seq_batch_layout_for_copy():
    batch = copy_task().batch(0)
    src, tgt_in, tgt_out = batch["src"], batch["tgt_in"], batch["tgt_out"]
    assert src.shape[0] == tgt_in.shape[0] == tgt_out.shape[0] == B
    assert tgt_in.shape == tgt_out.shape
    for row in range(B):
        source = [int(i) for i in src[row] if i != seq2seq.PAD_ID]
        assert 1 <= len(source) <= 5
        n = len(source)
        assert tgt_in[row, :n + 1].tolist() == [seq2seq.BOS_ID] + source            # teacher forcing
        assert tgt_out[row, :n + 1].tolist() == source + [seq2seq.EOS_ID]
        assert (tgt_out[row, n + 1:] == seq2seq.PAD_ID).all()


class CopyOracle:
    """A stand-in encoder-decoder that copies the source, except that it answers wrongly (a
    letter too few) for sources longer than ``wrong_above``."""

    def __init__(self, vocab_size, wrong_above=99):
        self.V, self.wrong_above = vocab_size, wrong_above

    def _answer(self, src_row):
        source = [int(i) for i in src_row if i != seq2seq.PAD_ID]
        return source[:-1] if len(source) > self.wrong_above else source

    def __call__(self, src, tgt_in, attention_mask=None, labels=None):
        src = np.asarray(src)
        logits = np.zeros(tgt_in.shape + (self.V,))
        for r in range(len(src)):
            answer = self._answer(src[r]) + [seq2seq.EOS_ID]
            for t in range(tgt_in.shape[1]):
                logits[r, t, answer[t] if t < len(answer) else seq2seq.PAD_ID] = 1.0
        return ModelOutput(logits=minishare.tensor(logits), loss=minishare.tensor(0.25))

    def generate(self, src, bos_id, eos_id, max_length, attention_mask=None):
        rows = [self._answer(row) + [eos_id] for row in np.asarray(src)]
        out = np.full((len(rows), max_length), eos_id)
        for r, row in enumerate(rows):
            out[r, :len(row)] = row[:max_length]
        return out


def test_seq2seq_evaluate_with_a_perfect_copier():
    task = copy_task()
    metrics = task.evaluate(CopyOracle(task.task.vocab_size))
    assert metrics == {"loss": 0.25, "token_accuracy": 1.0, "exact_match": 1.0}


def test_seq2seq_evaluate_counts_wrong_answers():
    task = copy_task()
    metrics = task.evaluate(CopyOracle(task.task.vocab_size, wrong_above=3))
    lengths = np.array([len(source) for source, _ in task.eval_pairs])
    assert 0 < (lengths <= 3).mean() < 1
    assert metrics["exact_match"] == pytest.approx((lengths <= 3).mean())
    # teacher-forced tokens: a wrong answer of length n - 1 still gets its first n - 1 tokens right
    # and misses the last letter and the EOS
    targets = lengths + 1
    missed = np.where(lengths > 3, 2, 0)
    assert metrics["token_accuracy"] == pytest.approx(1 - missed.sum() / targets.sum())


def test_seq2seq_accepts_a_task_name():
    task = Seq2SeqTask("reverse", batch_size=4, seed=0, n_eval=8)
    batch = task.batch(0)
    for row in range(4):
        source = [int(i) for i in batch["src"][row] if i != seq2seq.PAD_ID]
        assert batch["tgt_out"][row, :len(source)].tolist() == source[::-1]


# --- language modelling ---------------------------------------------------------------------------
def lm_task(corpus, seed=0):
    train_docs, eval_docs, tokenizer = corpus
    return LanguageModelingTask(train_docs, eval_docs, tokenizer, batch_size=4, seq_len=16, seed=seed,
                                n_eval_batches=2)


def test_lm_batches_are_windows_of_the_training_text(corpus):
    train_docs, _, tokenizer = corpus
    stream = []
    for document in train_docs:
        stream += tokenizer.encode(" ".join(document)) + [tokenizer.sep_id]
    task = lm_task(corpus)
    batch = task.batch(5)
    assert set(batch) == {"input_ids"}
    assert batch["input_ids"].shape == (4, 16) and batch["input_ids"].dtype == np.int64
    text = " " + " ".join(map(str, stream)) + " "
    for row in batch["input_ids"]:
        assert " " + " ".join(map(str, row.tolist())) + " " in text
    assert_batches_equal(batch, lm_task(corpus).batch(5))
    assert not np.array_equal(batch["input_ids"], lm_task(corpus).batch(6)["input_ids"])
    assert not np.array_equal(batch["input_ids"], lm_task(corpus, seed=1).batch(5)["input_ids"])


def test_lm_evaluate_reports_perplexity(corpus):
    task = lm_task(corpus)
    assert task.eval_windows.shape == (8, 16)

    class FixedLoss:
        def __call__(self, input_ids, labels=None):
            return ModelOutput(loss=minishare.tensor(math.log(7.0)))

    metrics = task.evaluate(FixedLoss())
    assert metrics["loss"] == pytest.approx(math.log(7.0))
    assert metrics["perplexity"] == pytest.approx(7.0)


def test_lm_loss_of_an_untrained_model_is_near_ln_v(corpus):
    V = corpus[2].vocab_size
    minishare.manual_seed(0)
    model = DecoderLM(TransformerConfig(vocab_size=V, hidden_size=16, num_hidden_layers=2,
                                        num_attention_heads=2, intermediate_size=32,
                                        max_position_embeddings=16))
    task = lm_task(corpus)
    loss, metrics = task.loss(model, task.batch(0))
    assert metrics == {}
    assert loss.item() == pytest.approx(math.log(V), abs=0.1)
    assert task.evaluate(model.eval())["loss"] == pytest.approx(math.log(V), abs=0.1)


def test_lm_refuses_a_corpus_too_small(corpus):
    _, eval_docs, tokenizer = corpus
    with pytest.raises(ValueError, match="seq_len=500"):
        LanguageModelingTask(eval_docs[:1], eval_docs[:1], tokenizer, seq_len=500)
