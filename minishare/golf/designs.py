"""The model an entry declares, as trained and as scored.

Most entries are one ``DecoderLM`` of their configuration. Two designs of the course are built
here from the entry's own fields (``entry.GOLF_FIELDS``):

- looped (``test_iterations``): trained at ``num_hidden_layers`` positions of one all-shared layer
  and scored at ``test_iterations`` positions (``at_test_depth``): a model of the deeper
  configuration holding the trained tensors themselves, so the bytes are the same;
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
from minishare.nn.transformer import Stack
from minishare.sharing import Plan


def build(entry, vocab_size):
    """The model ``entry`` trains, initialized (seed it first)."""
    rank = entry.relaxation_rank
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


def at_test_depth(entry, model, vocab_size):
    """``model`` as scored: a looped entry's trained tensors run at ``test_iterations`` positions
    (the parameters shared by identity, not copied), any other entry's model itself."""
    if entry.model.get("test_iterations") is None:
        return model
    with init.shape_only():
        deeper = DecoderLM(entry.config(vocab_size, layers=entry.test_iterations))
    trained = dict(model.named_parameters())
    for name, p in deeper.named_parameters():
        p.data = trained[name].data
    deeper.eval()
    return deeper
