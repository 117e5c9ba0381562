"""The model an entry declares, as trained and as scored.

Most entries are one ``DecoderLM`` of their configuration. Two designs of the course are built
here from the entry's own fields (``entry.GOLF_FIELDS``):

- looped (``test_iterations``): one all-shared layer run r times (``LoopedLM``). Training draws r
  at every step, with mean ``num_hidden_layers`` (``nn.looped.sample_iterations``, as chapter 14's
  looped models train: a model trained at one fixed depth has never been asked to apply its layer
  more times, and does not extrapolate), and scoring runs it ``test_iterations`` times. The same
  stored tensors serve every depth, so the bytes do not grow with r;
- relaxed (``relaxation_rank`` r): ``models.recursive.to_relaxed`` of a freshly initialized
  not-shared model onto the declared sharing plan. Its stored tensors are the shared model's and,
  at each of the N positions, every Linear's LoRA factors A (r, in) and B (out, r); ``lora_shapes``
  lists those from the shared model built shape-only, so the budget is counted before anything
  is built for real (the SVD that initializes the factors needs real numbers).
"""
import dataclasses

from minishare.models import DecoderLM
from minishare.models.recursive import to_relaxed
from minishare.nn import init
from minishare.nn.layers import Linear
from minishare.nn.module import Module
from minishare.nn.transformer import Stack
from minishare.sharing import Plan


def build(entry, vocab_size):
    """The model ``entry`` trains, initialized (seed it first)."""
    rank = entry.relaxation_rank
    if entry.model.get("test_iterations") is not None:
        return LoopedLM(DecoderLM(entry.config(vocab_size)), entry.test_iterations)
    if rank is None:
        return DecoderLM(entry.config(vocab_size))
    config = entry.config(vocab_size)
    plan = Plan.build(config.sharing, config.num_hidden_layers, config.num_unique_layers)
    fresh = DecoderLM(dataclasses.replace(config, sharing="not-shared", num_unique_layers=None))
    return to_relaxed(fresh, plan, rank)


def shared_model(entry, vocab_size):
    """The model of the entry's configuration, shape-only: the tensors a relaxed model shares."""
    with init.shape_only():
        return DecoderLM(entry.config(vocab_size))


def lora_shapes(model, rank):
    """The shapes of the LoRA factors a relaxation of rank ``rank`` adds to ``model``: at every
    position of every stack, for every Linear of the set that runs there, A (r, in) and B (out, r)."""
    shapes = []
    for stack in (m for m in model.modules() if isinstance(m, Stack)):
        for component, _ in stack.components():
            for position in range(stack.plan.n_layers):
                for linear in stack.set_at(component, position).modules():
                    if isinstance(linear, Linear):
                        shapes += [(rank, linear.in_features), (linear.out_features, rank)]
    return shapes


class LoopedLM(Module):
    """A looped entry's model: ``lm``, a ``DecoderLM`` of one all-shared layer, run at r positions
    of that layer. ``forward(input_ids, labels=None, iterations=None)``: r = ``iterations`` (the
    training batch's draw); without it, the trained mean (``num_hidden_layers``) in training mode
    and ``test_iterations`` in evaluation, the depth the entry is scored at."""

    def __init__(self, lm, test_iterations):
        super().__init__()
        self.lm, self.test_iterations = lm, test_iterations
        self.mean_iterations = lm.config.num_hidden_layers

    def forward(self, input_ids, labels=None, iterations=None):
        r = iterations or (self.mean_iterations if self.training else self.test_iterations)
        self.lm.decoder.loop(Plan.build("all-shared", r))
        return self.lm(input_ids, labels=labels)
