"""An entry of the class competition: a declaration, not code.

An entry is a small JSON file that names a decoder-only language model (``DecoderLM``, any
``TransformerConfig`` the library builds: the sharing plan with N and M, E, H, the heads, the FFN
width, tying, the LayerNorm position...) and its training recipe (optimizer, rate, schedule and
warm-up, batch, sequence length, steps, seed), and the precision its weights are stored at::

    {"name": "albert-style", "precision": "int8",
     "model": {"vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 6, "sharing": "all-shared"},
     "recipe": {"lr": 0.003, "batch_size": 16, "seq_len": 64, "steps": 600, "seed": 0}}

The grader builds, trains, quantizes and scores the model itself from these few numbers and
names, so nothing an entry could print or write takes part: only known fields are read, each of a
stated type and range, and every string is one of a closed set (a strategy, an activation, an
optimizer) or a short plain name. A field the grader does not know is refused, and a field that
asks for data of its own (a corpus, a file, a path, a tokenizer, pretrained weights) is refused as
outside data: every entry trains on the same training split, which the grader provides. Each
problem is one ``InvalidValue`` naming the file, the field and the rule.

Two model fields are the competition's own, not ``TransformerConfig``'s (``GOLF_FIELDS``):

- ``test_iterations``: a looped model (Dehghani et al.'s Universal Transformer, Yang et al.'s
  looped Transformer) runs its one shared layer more times at test time than it trained with:
  in training a number of iterations drawn at every step with mean ``num_hidden_layers`` (at least
  2: Geiping et al.'s draw, ``nn.looped.sample_iterations``), ``test_iterations`` in scoring, the
  same stored tensors. It needs ``"sharing": "all-shared"`` (one set serves every position, so the
  set exists at any depth) and at least ``num_hidden_layers``.
- ``relaxation_rank``: a relaxed recursive model (Bae et al., 2024): the declared sharing plan's
  shared sets, and at every position a LoRA correction of this rank on every Linear
  (``models.recursive.to_relaxed``), built from a freshly initialized not-shared model and then
  trained from scratch like any entry. It needs a sharing plan that shares (not ``not-shared``).

The code track (``minishare.grader.golf_code``) is for a student who wants a model of their own
modules: ``"model": {"code": "model.py", "vocab_size": 256}`` names the module beside the entry
(``model.py``, defining ``build(vocab_size, seq_len)``), and no other model field; the recipe and
the precision are read as above, and the same three budgets hold.
"""
import dataclasses
import re

from minishare import safeio
from minishare.errors import InvalidValue, MinishareError
from minishare.models import TransformerConfig
from minishare.train import TrainConfig

MAX_ENTRY_BYTES = 16 << 10     # a declaration is a few hundred bytes
DEFAULT_VOCAB = 256            # V when an entry declares none
MAX_VOCAB = 4096               # the BPE vocabulary asked for (the grammar corpus saturates at 318)
PRECISIONS = {"float32": 4, "float16": 2, "int8": 1}     # bytes per stored value

# The model fields an entry may set: TransformerConfig's, less those the grader decides (the
# positions, sinusoidal and free, follow seq_len; an LM has no separate decoder stack; the padding id
# is the tokenizer's). TransformerConfig checks each value itself.
MODEL_FIELDS = ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                "intermediate_size", "hidden_act", "sharing", "num_unique_layers", "norm_position",
                "tie_word_embeddings", "timestep_signal", "act", "act_epsilon", "act_loss_weight",
                "layer_norm_eps", "initializer_range", "hidden_dropout_prob", "attention_probs_dropout_prob")
# The competition's model fields, read by the grader, not by TransformerConfig (see above).
GOLF_FIELDS = ("test_iterations", "relaxation_rank")
CODE_FILE = "model.py"         # the code track's one module: "model": {"code": "model.py", ...}
CODE_FIELDS = ("code", "vocab_size")
MAX_TEST_ITERATIONS = 64       # a scoring pass runs at most this many positions
# The recipe: TrainConfig's loop settings, the LM task's batch and window, and the seed.
RECIPE_DEFAULTS = {"optimizer": TrainConfig.optimizer, "lr": TrainConfig.lr,
                   "weight_decay": TrainConfig.weight_decay, "schedule": TrainConfig.schedule,
                   "warmup_steps": None, "max_grad_norm": TrainConfig.max_grad_norm,
                   "batch_size": 16, "seq_len": 64, "steps": 300, "seed": 0}
TOP_FIELDS = ("name", "precision", "model", "recipe")
# Names that ask for data the grader does not provide, refused as such wherever they appear.
OUTSIDE_DATA = ("corpus", "data", "dataset", "documents", "text", "train_file", "file", "path", "url",
                "tokenizer", "tokenizer_path", "pretrained", "checkpoint", "weights", "init_from", "resume")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}")


@dataclasses.dataclass(frozen=True)
class Entry:
    """A checked declaration: ``model`` and ``recipe`` hold every field, defaults filled in."""
    name: str
    precision: str
    model: dict
    recipe: dict

    @property
    def code(self):
        """The code track's module file (``CODE_FILE``); None for a declared model."""
        return self.model.get("code")

    def config(self, vocab_size, layers=None):
        """The model's configuration, with the tokenizer's actual V (at most the V asked for: a
        small corpus can run out of merges) and positions for the recipe's windows; ``layers``
        positions instead of ``num_hidden_layers`` (a looped entry's test-time depth)."""
        fields = {k: v for k, v in self.model.items() if k not in GOLF_FIELDS}
        fields.update(vocab_size=vocab_size, max_position_embeddings=self.recipe["seq_len"])
        if layers is not None:
            fields["num_hidden_layers"] = layers
        return TransformerConfig(**fields)

    @property
    def test_iterations(self):
        """Positions the scored model runs: ``test_iterations``, or the trained depth."""
        return self.model.get("test_iterations") or self.config(self.model["vocab_size"]).num_hidden_layers

    @property
    def relaxation_rank(self):
        """The LoRA rank of a relaxed entry; None for an entry that is not relaxed."""
        return self.model.get("relaxation_rank")

    def train_config(self):
        """The training loop's settings (no evaluation during training: the score is the grader's)."""
        r = self.recipe
        return TrainConfig(steps=r["steps"], lr=r["lr"], optimizer=r["optimizer"], weight_decay=r["weight_decay"],
                           warmup_steps=r["warmup_steps"], schedule=r["schedule"],
                           max_grad_norm=r["max_grad_norm"], eval_every=r["steps"], progress=False)


def load_entry(path):
    """The entry in the JSON file ``path``, checked (see ``parse_entry``)."""
    return parse_entry(safeio.load_json(path, MAX_ENTRY_BYTES), str(path))


def parse_entry(value, where="entry"):
    """An ``Entry`` from a parsed JSON value; ``where`` (the file) starts every message."""
    top = _section(value, where, "", TOP_FIELDS)
    name = top.get("name", "entry")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidValue(f"{where}: name must be a plain name of at most 64 letters, digits, spaces, "
                           f"'.', '_' or '-', got {name!r}")
    precision = top.get("precision", "float32")
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise InvalidValue(f"{where}: precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    declared = top.get("model", {})
    code = isinstance(declared, dict) and "code" in declared
    model = _section(declared, where, "model.", CODE_FIELDS if code else MODEL_FIELDS + GOLF_FIELDS)
    recipe = {**RECIPE_DEFAULTS, **_section(top.get("recipe", {}), where, "recipe.", tuple(RECIPE_DEFAULTS))}
    entry = Entry(name, precision, {"vocab_size": DEFAULT_VOCAB, **model}, _check_recipe(recipe, where))
    safeio.integer(entry.model["vocab_size"], f"{where}: model.vocab_size", low=6, high=MAX_VOCAB)
    if code:
        if entry.code != CODE_FILE:
            raise InvalidValue(f"{where}: model.code names the code track's module, which must be "
                               f"{CODE_FILE!r} beside the entry, got {entry.code!r}")
    try:        # every model rule (heads divide H, M with N, ...) is the configuration's own
        entry.train_config()
        config = None if code else entry.config(entry.model["vocab_size"])
    except MinishareError as error:
        raise type(error)(f"{where}: {error}") from None
    if code:    # the module's shapes and step are measured by the grader (golf_code), not declared
        return entry
    _check_golf_fields(entry.model, config, where)
    _check_step(config, entry.recipe, where)
    return entry


def _check_golf_fields(model, config, where):
    """``test_iterations`` and ``relaxation_rank``: each alone, each with the sharing it needs."""
    N, iterations, rank = config.num_hidden_layers, model.get("test_iterations"), model.get("relaxation_rank")
    if iterations is not None and rank is not None:
        raise InvalidValue(f"{where}: model.test_iterations and model.relaxation_rank exclude each other "
                           "(a relaxed model has a correction of its own at each trained position)")
    if iterations is not None:
        safeio.integer(iterations, f"{where}: model.test_iterations", low=N, high=max(N, MAX_TEST_ITERATIONS))
        if N < 2:
            raise InvalidValue(f"{where}: a looped entry (model.test_iterations) trains at a depth drawn "
                               f"with mean num_hidden_layers, which must be at least 2, got {N}")
        if model.get("sharing") != "all-shared":
            raise InvalidValue(f"{where}: model.test_iterations needs \"sharing\": \"all-shared\" (one layer "
                               f"looped at every position), got sharing {model.get('sharing', 'not-shared')!r}")
    if rank is not None:
        limit = min(config.hidden_size, config.intermediate_size)
        safeio.integer(rank, f"{where}: model.relaxation_rank", low=1, high=limit)
        if model.get("sharing", "not-shared") == "not-shared":
            raise InvalidValue(f"{where}: model.relaxation_rank needs a sharing plan that shares (all-shared, "
                               "cycle, sequence, ...) to relax; got not-shared")


# The CPU limit is checked between steps, so one step must stay small: bytes bound the parameters,
# not the work (an all-shared layer looped 4,000 times is a few KiB). A step's multiply-accumulates
# (forward and backward, about 3 times the forward's) and the floats its activations hold are
# bounded at some 30 and 60 times the example entries'.
MAX_STEP_MACS = 2 * 10 ** 10
MAX_STEP_FLOATS = 1 << 28


def step_size(config, recipe):
    """(multiply-accumulates, activation floats) of one training step, roughly: per token and
    position the projections (4 H²) and the FFN (2 H F) and attention's scores and mix (2 T H),
    the output layer once (H V); activations a few H and F per token and position, and the
    attention maps (heads · T² per sequence and position). A looped entry's N is its mean depth:
    one of its steps may draw a deeper one (about 2.4 N at two standard deviations of the draw)."""
    B, T, N = recipe["batch_size"], recipe["seq_len"], config.num_hidden_layers
    H, F, V, heads = config.hidden_size, config.intermediate_size, config.vocab_size, config.num_attention_heads
    macs = 3 * B * T * (N * (4 * H * H + 2 * H * F + 2 * T * H) + H * V)
    floats = B * T * N * (8 * H + 2 * F) + B * heads * N * T * T
    return macs, floats


def _check_step(config, recipe, where):
    macs, floats = step_size(config, recipe)
    if macs > MAX_STEP_MACS or floats > MAX_STEP_FLOATS:
        raise InvalidValue(f"{where}: one training step would take about {macs:,} multiply-accumulates and hold "
                           f"{floats:,} activation values; the limits are {MAX_STEP_MACS:,} and {MAX_STEP_FLOATS:,} "
                           "(the CPU limit is checked between steps): fewer positions (num_hidden_layers), a smaller "
                           "batch_size or seq_len")


def _section(value, where, prefix, known):
    """``value`` as a dict whose keys are all in ``known``: outside data and unknown fields refused."""
    if not isinstance(value, dict):
        raise InvalidValue(f"{where}: {prefix.rstrip('.') or 'the entry'} must be a JSON object, got "
                           f"{type(value).__name__}")
    for key in value:
        if key.lower() in OUTSIDE_DATA:
            raise InvalidValue(f"{where}: {prefix}{key} asks for outside data: an entry trains only on the "
                               "training split the grader provides (no corpus, file, path, tokenizer or "
                               "weights of its own); remove the field")
        if key not in known:
            raise InvalidValue(f"{where}: unknown field {prefix}{key}; known fields: {', '.join(known)}")
    return value


def _check_recipe(r, where):
    """The recipe's types and ranges (the optimizer's and schedule's names are TrainConfig's to check)."""
    at = f"{where}: recipe."
    safeio.integer(r["steps"], at + "steps", high=10 ** 6)
    safeio.integer(r["batch_size"], at + "batch_size", high=1024)
    safeio.integer(r["seq_len"], at + "seq_len", low=2, high=1024)
    safeio.integer(r["seed"], at + "seed", low=0, high=2 ** 32 - 1)
    if r["warmup_steps"] is not None:
        safeio.integer(r["warmup_steps"], at + "warmup_steps", low=0, high=r["steps"])
    safeio.number(r["lr"], at + "lr", "be a number in (0, 1]", lambda lr: 0 < lr <= 1)
    safeio.number(r["weight_decay"], at + "weight_decay", "be a number in [0, 1]", lambda wd: 0 <= wd <= 1)
    safeio.number(r["max_grad_norm"], at + "max_grad_norm", "be a number > 0", lambda g: g > 0)
    return r
