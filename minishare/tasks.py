"""What a model is trained on: the tasks the one training loop (``minishare.train``) accepts.

A task answers four questions, so the loop never needs to know which model it trains::

    task.batch(i)                  the i-th training batch (a dict of host arrays), a pure function
                                   of the task's seed and i, so a resumed run sees the same data
    task.loss(model, batch)        the training loss (a Tensor) and metrics (floats, or 0-d Tensors,
                                   which the loop reads back with the loss in one transfer)
    task.evaluate(model)           held-out metrics (floats), computed without gradients
    task.make_model_inputs(batch)  (optional) nothing else is needed by the loop

and two more for data-parallel training (``minishare.distributed``), which weights each rank's
share of a batch by how many of the batch's items it holds::

    task.loss_terms(model, batch)  {name: Tensor}: the loss as a sum of means (a single mean is
                                   named "loss"), the other names reported as metrics
    task.loss_counts(batch)        {name: int}: the items each term averages over (host arrays only)

Four tasks: ALBERT pre-training (MLM + SOP or NSP), a toy sequence-to-sequence task for the
encoder-decoder, next-token language modelling for the decoder-only LM, and the pointer forests
of chapter 14 for the looped model (which trains with a number of iterations drawn per batch),
the same forests for chapter 16's models whose tokens choose their depth.
"""
import numpy   # host-side data handling: batches are NumPy arrays until the model moves them

from minishare import backend
from minishare.data import forest as forests, pretraining, seq2seq
from minishare.errors import InvalidValue
from minishare.nn.looped import sample_iterations
from minishare.tensor import no_grad

IGNORE_INDEX = pretraining.IGNORE_INDEX


def _predictions(logits):
    """argmax over the last axis, computed where the logits live; only the (B, T) predictions are
    copied to the host, not the (B, T, V) logits."""
    return backend.to_numpy(logits.data.argmax(axis=-1))


def _accuracy(predictions, targets, keep):
    """Fraction of ``keep`` positions where the prediction equals the target (host arrays)."""
    hits = (predictions == targets) & keep
    return float(hits.sum()) / max(int(keep.sum()), 1)


def _masked(batch):
    """The flat positions b·T + t that carry an MLM label, in order: (P,) host integers."""
    return numpy.flatnonzero(batch["labels"] != IGNORE_INDEX)


class PretrainingTask:
    """ALBERT pre-training: MLM plus sentence-order prediction ("sop") or next-sentence prediction
    ("nsp") as the second objective. Evaluation reports the MLM loss and accuracy on held-out
    documents and the accuracy on *both* SOP and NSP examples, whichever the model was trained
    on (the layout of ALBERT's Table 5)."""

    def __init__(self, train_documents, eval_documents, tokenizer, objective="sop", batch_size=32,
                 max_seq_length=64, seed=0, n_eval_batches=4, max_ngram=3):
        self.tokenizer, self.batch_size, self.seed = tokenizer, batch_size, seed
        self.max_seq_length = max_seq_length
        self.train = pretraining.PretrainingData(train_documents, tokenizer, max_seq_length,
                                                 task=objective, max_ngram=max_ngram)
        self.objective = objective
        if len(eval_documents) < 2:     # (else the NSP evaluation below would be the one to complain)
            raise InvalidValue(f"the held-out split has {len(eval_documents)} document(s); evaluation needs "
                               "at least 2 (it reports sentence-order and next-sentence accuracy, ALBERT's "
                               "Table 5, and a next-sentence example takes its second segment from another "
                               "document): pre-training holds out 10% of the documents, so use a corpus of "
                               "at least 20 documents (separated by blank lines)")
        self.eval_sets = {}
        for name in ("sop", "nsp"):
            data = pretraining.PretrainingData(eval_documents, tokenizer, max_seq_length, task=name,
                                               max_ngram=max_ngram)
            batches = list(data.batches(batch_size, seed=10_000 + seed, pad_to=max_seq_length))
            self.eval_sets[name] = batches[:n_eval_batches]
        self._epoch_index, self._batches = None, None
        # The unigram baseline: predict every masked token from its training-set frequency alone
        # (add-one smoothed). An MLM that uses context must beat its cross-entropy.
        counts = numpy.bincount([i for doc in self.train.documents for sentence in doc for i in sentence],
                                minlength=tokenizer.vocab_size) + 1.0
        self.unigram_log_probs = numpy.log(counts / counts.sum())
        self._epoch_sizes = []          # batches in epochs 0, 1, ...: epochs differ in length

    def batch(self, index):
        """Batch ``index`` of the stream of epochs; epoch e holds the examples drawn with seed
        (seed, e) (fresh segments and masks every epoch), in full batches only."""
        epoch = 0
        while True:
            if epoch == len(self._epoch_sizes):   # drawn once, so a step never redraws old epochs
                self._epoch_sizes.append(len(self._epoch(epoch)))
            if index < self._epoch_sizes[epoch]:
                return self._epoch(epoch)[index]
            index, epoch = index - self._epoch_sizes[epoch], epoch + 1

    def _epoch(self, epoch):
        if self._epoch_index != epoch:
            examples = self.train.examples(self.seed * 1_000_003 + epoch)
            self._batches = [pretraining.collate(examples[i:i + self.batch_size], self.train.label_name,
                                                 self.tokenizer.pad_id, self.max_seq_length)
                             for i in range(0, len(examples) - self.batch_size + 1, self.batch_size)]
            if not self._batches:
                raise InvalidValue(f"the training corpus has fewer than batch_size={self.batch_size} "
                                   "examples")
            self._epoch_index = epoch
        return self._batches

    @staticmethod
    def _forward(model, batch, label_name):
        """The model on a batch, its MLM head run at the masked positions only (found here, on
        the host, so a GPU never waits for their count)."""
        return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                     token_type_ids=batch["token_type_ids"], labels=batch["labels"],
                     sentence_order_label=batch[label_name], mlm_positions=_masked(batch))

    def loss(self, model, batch):
        out = self._forward(model, batch, self.train.label_name)
        return out.loss, {"mlm_loss": out.mlm_loss.detach(), "sop_loss": out.sop_loss.detach()}

    def loss_terms(self, model, batch):
        out = self._forward(model, batch, self.train.label_name)
        return {"mlm_loss": out.mlm_loss, "sop_loss": out.sop_loss}

    def loss_counts(self, batch):
        """MLM: a mean over the masked tokens (labels != -100); SOP/NSP: over the sequences."""
        return {"mlm_loss": int((batch["labels"] != IGNORE_INDEX).sum()),
                "sop_loss": len(batch[self.train.label_name])}

    def evaluate(self, model):
        metrics = {}
        with no_grad():
            for name, batches in self.eval_sets.items():
                label_name = pretraining.TASKS[name]
                mlm_losses, mlm_hits, mlm_count, hits, count = [], 0.0, 0, 0.0, 0
                for batch in batches:
                    out = self._forward(model, batch, label_name)
                    targets = batch["labels"].reshape(-1)[_masked(batch)]    # (P,)
                    n = len(targets)
                    mlm_losses.append(out.mlm_loss.item() * n)
                    mlm_hits += float((_predictions(out.prediction_logits) == targets).sum())
                    mlm_count += n
                    labels = batch[label_name]
                    hits += float((_predictions(out.sop_logits) == labels).sum())
                    count += len(labels)
                metrics[f"{name}_accuracy"] = hits / count
                if name == self.objective:
                    metrics["mlm_loss"] = sum(mlm_losses) / mlm_count
                    metrics["mlm_accuracy"] = mlm_hits / mlm_count
                    targets = numpy.concatenate([b["labels"][b["labels"] != IGNORE_INDEX] for b in batches])
                    metrics["mlm_unigram_loss"] = float(-self.unigram_log_probs[targets].mean())
        return metrics


class Seq2SeqTask:
    """A toy sequence-to-sequence task (copy, reverse, sort, addition, scan) for the
    encoder-decoder. Evaluation: loss, token accuracy (teacher forcing) and exact match of greedy
    decoding on held-out problems, which no training batch of any seed holds (``seq2seq.examples``)."""

    def __init__(self, task, batch_size=64, seed=0, n_eval=256):
        self.task = seq2seq.get_task(task) if isinstance(task, str) else task
        self.batch_size, self.seed = batch_size, seed
        self.eval_pairs = seq2seq.examples(self.task, n_eval, seed=10_000 + seed, held_out=True)

    def batch(self, index):
        pairs = seq2seq.examples(self.task, self.batch_size, seed=self.seed * 1_000_003 + index + 1)
        return seq2seq.collate(pairs)

    @staticmethod
    def _labels(batch):
        return numpy.where(batch["tgt_out"] == seq2seq.PAD_ID, IGNORE_INDEX, batch["tgt_out"])

    def _forward(self, model, batch):
        return model(batch["src"], batch["tgt_in"], attention_mask=batch["src"] != seq2seq.PAD_ID,
                     labels=self._labels(batch))

    def loss(self, model, batch):
        return self._forward(model, batch).loss, {}

    def loss_terms(self, model, batch):
        if model.config.act:
            raise InvalidValue("data-parallel training cannot weight an ACT model's loss: its ponder cost "
                               "averages over source and target tokens inside the model, apart from the "
                               "cross-entropy's targets; train it in one process")
        return {"loss": self._forward(model, batch).loss}

    def loss_counts(self, batch):
        """The cross-entropy averages over the target tokens that are not padding."""
        return {"loss": int((self._labels(batch) != IGNORE_INDEX).sum())}

    def evaluate(self, model):
        batch = seq2seq.collate(self.eval_pairs)
        labels = self._labels(batch)
        with no_grad():
            out = self._forward(model, batch)
            max_len = batch["tgt_out"].shape[1]
            generated = model.generate(batch["src"], seq2seq.BOS_ID, seq2seq.EOS_ID, max_len,
                                       attention_mask=batch["src"] != seq2seq.PAD_ID)
        exact = [list(_until_eos(g)) == list(_until_eos(t))
                 for g, t in zip(generated, batch["tgt_out"])]
        return {"loss": out.loss.item(),
                "token_accuracy": _accuracy(_predictions(out.logits), labels, labels != IGNORE_INDEX),
                "exact_match": sum(exact) / len(exact)}


def _until_eos(ids):
    for i in ids:
        if i == seq2seq.EOS_ID:
            return
        yield int(i)


class LanguageModelingTask:
    """Next-token prediction on a corpus for the decoder-only LM: windows of ``seq_len`` tokens
    from the concatenated training text; evaluation on fixed windows of held-out text. With
    ``mean_iterations`` set, each batch also draws the number of iterations r a looped model runs
    (``nn.looped.sample_iterations``), a pure function of (seed, batch index) like the windows."""

    def __init__(self, train_documents, eval_documents, tokenizer, batch_size=32, seq_len=64,
                 seed=0, n_eval_batches=4, mean_iterations=None):
        self.batch_size, self.seq_len, self.seed = batch_size, seq_len, seed
        self.mean_iterations = mean_iterations
        self.train_ids = self._stream(train_documents, tokenizer)
        eval_ids = self._stream(eval_documents, tokenizer)
        n = min(len(eval_ids) // seq_len, batch_size * n_eval_batches)
        if n == 0 or len(self.train_ids) <= seq_len:
            raise InvalidValue(f"corpus too small for windows of seq_len={seq_len}")
        self.eval_windows = eval_ids[: n * seq_len].reshape(n, seq_len)

    @staticmethod
    def _stream(documents, tokenizer):
        return numpy.array([i for d in documents for i in tokenizer.encode(" ".join(d)) + [tokenizer.sep_id]],
                           dtype=numpy.int64)

    def batch(self, index):
        rng = numpy.random.default_rng(self.seed * 1_000_003 + index + 1)
        starts = rng.integers(0, len(self.train_ids) - self.seq_len, self.batch_size)
        batch = {"input_ids": numpy.stack([self.train_ids[s:s + self.seq_len] for s in starts])}
        if self.mean_iterations is not None:        # drawn after the windows: those stay as they were
            batch["iterations"] = sample_iterations(rng, self.mean_iterations)
        return batch

    def loss(self, model, batch):
        depth = {"iterations": batch["iterations"]} if "iterations" in batch else {}
        return model(batch["input_ids"], labels=batch["input_ids"], **depth).loss, {}

    def loss_terms(self, model, batch):
        return {"loss": self.loss(model, batch)[0]}

    def loss_counts(self, batch):
        """Every window holds T - 1 targets (and T ponder positions with ACT): a share of the
        windows is the same share of every mean."""
        return {"loss": len(batch["input_ids"])}

    def evaluate(self, model):
        with no_grad():
            loss = model(self.eval_windows, labels=self.eval_windows).loss.item()
        return {"loss": loss, "perplexity": float(numpy.exp(loss))}


class PointerForestTask:
    """The roots of pointer forests (``data.forest``) for a looped token classifier
    (``models.LoopedForTokenClassification``). Each batch draws its depth uniformly from
    ``train_depths`` and, with ``mean_iterations`` set, its number of iterations r from
    ``nn.looped.sample_iterations`` (None: the model's own fixed r, a not-shared baseline);
    both are pure functions of (seed, batch index). Evaluation: loss and accuracy at the model's
    r on held-out forests of the deepest training depth (forests no training batch holds), and the
    accuracy at its deepest nodes."""

    def __init__(self, forest, train_depths, batch_size=32, seed=0, mean_iterations=None, n_eval=64):
        self.forest, self.batch_size, self.seed = forest, batch_size, seed
        self.train_depths = tuple(forest.check_depth(d) for d in train_depths)
        self.mean_iterations = mean_iterations
        self.eval_batch = forest.batch(numpy.random.default_rng((seed, 10_000)), n_eval, max(self.train_depths),
                                       held_out=True)

    def batch(self, index):
        rng = numpy.random.default_rng((self.seed, index))
        depth = self.train_depths[int(rng.integers(len(self.train_depths)))]
        batch = self.forest.batch(rng, self.batch_size, depth)
        if self.mean_iterations is not None:
            batch["iterations"] = sample_iterations(rng, self.mean_iterations)
        return batch

    def loss(self, model, batch):
        return model(batch["input_ids"], labels=batch["labels"], iterations=batch.get("iterations")).loss, {}

    def evaluate(self, model):
        batch = self.eval_batch
        with no_grad():
            out = model(batch["input_ids"], labels=batch["labels"])
        predictions = _predictions(out.logits)
        deepest = batch["depths"] == batch["depths"].max()
        return {"loss": out.loss.item(),
                "accuracy": _accuracy(predictions, batch["labels"], numpy.ones_like(deepest)),
                "accuracy_deepest": _accuracy(predictions, batch["labels"], deepest)}


class RoutedForestTask(PointerForestTask):
    """The same pointer forests for a recursive token classifier whose tokens choose their depth
    (``models.RecursiveForTokenClassification``, chapter 16): the model fixes its own passes, so a
    batch carries no number of iterations, and evaluation adds the mean passes per token."""

    def __init__(self, forest, train_depths, batch_size=32, seed=0, n_eval=64):
        super().__init__(forest, train_depths, batch_size, seed, None, n_eval)

    def loss(self, model, batch):
        return model(batch["input_ids"], labels=batch["labels"]).loss, {}

    def evaluate(self, model):
        with no_grad():
            passes = model(self.eval_batch["input_ids"]).passes
        return {**super().evaluate(model), "passes": float(backend.to_numpy(passes).mean())}
