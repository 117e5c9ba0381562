"""Residual sublayers and the encoder and decoder stacks, with sharing decided by a plan.

Each of the N layer positions runs components, each wrapped in a residual connection and a
LayerNorm, in one of two arrangements (Xiong et al., 2020, compare them):

    Post-LN  (Vaswani et al. 2017; BERT; ALBERT):  x ← LN(x + Dropout(f(x)))
    Pre-LN   (Takase & Kiyono report both):        x ← x + Dropout(f(LN(x)))   and a final LN

A component's parameter set (ALBERT's unit of sharing) is the sublayer f together with its
LayerNorm. The stacks build each distinct set once and ask the plan (``minishare.sharing``) which
set serves which position; they never look at the strategy's name. A stack can be re-planned
(``Stack.replan``): a conversion (``minishare.models.recursive``) gives a trained stack a new plan
and new sets made from the ones the old plan ran at each position.
"""
from minishare import backend, functional as F
from minishare.errors import InvalidValue
from minishare.nn.act import AdaptiveComputationTime
from minishare.nn.attention import MultiHeadAttention, causal_mask
from minishare.nn.container import ModuleList
from minishare.nn.layers import Dropout, LayerNorm, Linear
from minishare.nn.module import Module

ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),   # ALBERT v2 and BERT's TF code
    "relu": F.relu,
    "tanh": F.tanh,
}
NORM_POSITIONS = ("post", "pre")


def check_activation(hidden_act, name="hidden_act"):
    """The one rule of an FFN's activation (a configuration checks it too, as ``name``): a key of
    ``ACTIVATIONS``."""
    if not isinstance(hidden_act, str) or hidden_act not in ACTIVATIONS:
        raise InvalidValue(f"{name} must be one of {', '.join(ACTIVATIONS)}, got {hidden_act!r}")


def check_norm_position(norm_position, name="norm_position"):
    """The one rule of where the LayerNorm goes (a configuration checks it too, as ``name``)."""
    if not isinstance(norm_position, str) or norm_position not in NORM_POSITIONS:
        raise InvalidValue(f"{name} must be 'post' or 'pre', got {norm_position!r}")


class Residual(Module):
    """One component in its residual connection: Post-LN or Pre-LN around ``sublayer``."""

    def __init__(self, sublayer, hidden_size, norm_position, dropout, eps):
        super().__init__()
        check_norm_position(norm_position)
        self.sublayer, self.norm_position = sublayer, norm_position
        self.LayerNorm = LayerNorm(hidden_size, eps=eps)
        self.dropout = Dropout(dropout)

    def forward(self, x, *args, **kwargs):
        if self.norm_position == "post":
            return self.LayerNorm(x + self.dropout(self.sublayer(x, *args, **kwargs)))
        return x + self.dropout(self.sublayer(self.LayerNorm(x), *args, **kwargs))


class FFN(Module):
    """The position-wise feed-forward network: FFN(x) = W₂ act(W₁ x + b₁) + b₂,
    H -> intermediate_size -> H. x (B, T, H) -> (B, T, H)."""

    def __init__(self, hidden_size, intermediate_size, hidden_act):
        super().__init__()
        check_activation(hidden_act)
        self.hidden_act = hidden_act
        self.ffn = Linear(hidden_size, intermediate_size)
        self.ffn_output = Linear(intermediate_size, hidden_size)

    def forward(self, x):
        return self.ffn_output(ACTIVATIONS[self.hidden_act](self.ffn(x)))


def timestep_signal(t, T, H, dtype):
    """The Universal Transformer's coordinate embedding (Dehghani et al., 2018, Sec. 2.1), added
    before recurrence step t:  P[p, 2j] = sin(p/10000^(2j/H)) + sin(t/10000^(2j/H)),
    P[p, 2j+1] = cos(p/10000^(2j/H)) + cos(t/10000^(2j/H)).  -> (T, H), H even."""
    xp = backend.xp
    freq = 1.0 / 10000.0 ** (xp.arange(0, H, 2) / H)                    # (H/2,)
    angles = xp.arange(T)[:, None] * freq                                # (T, H/2)
    signal = xp.zeros((T, H), dtype=dtype)
    signal[:, 0::2] = xp.sin(angles) + xp.sin(t * freq)
    signal[:, 1::2] = xp.cos(angles) + xp.cos(t * freq)
    return signal


class Stack(Module):
    """N positions served by the distinct component sets the plan asks for.

    ``attention``, ``cross_attention`` (decoders only) and ``ffn`` build one parameter set of
    their component each time they are called; the stack calls each as often as the plan has sets
    of that component and keeps the sets in ``attention_sets``, ``cross_attention_sets`` and
    ``ffn_sets``. Position i runs ``sets[plan.index(component, i)]`` of each component in turn.

    ``timestep``: add the Universal Transformer's coordinate embedding before every position
    (``timestep_signal``). ``act``: Adaptive Computation Time (``minishare.nn.act``) with
    threshold 1 − ``act_epsilon``: the N positions become at most N steps, each position of the
    sequence halting on its own, and the output is the halting-weighted mix of its states. The plan
    still decides which parameters serve step i (with ``"universal"``, one layer for every step).
    """

    def __init__(self, plan, attention, ffn, cross_attention=None, *, hidden_size, norm_position,
                 dropout, eps, timestep=False, act=False, act_epsilon=0.01):
        super().__init__()

        def sets(component, make):   # the plan's distinct sets, each in its residual connection
            return ModuleList(Residual(make(), hidden_size, norm_position, dropout, eps)
                              for _ in range(plan.n_sets(component)))

        self.plan, self.timestep = plan, timestep
        self.attention_sets = sets("attention", attention)
        self.cross_attention_sets = None if cross_attention is None else sets("cross_attention", cross_attention)
        self.ffn_sets = sets("ffn", ffn)
        self.act = AdaptiveComputationTime(hidden_size, act_epsilon) if act else None
        self.final_norm = LayerNorm(hidden_size, eps=eps) if norm_position == "pre" else None

    def components(self):
        """(component, its sets) in the order a layer runs them."""
        return [(component, sets) for component, sets in (("attention", self.attention_sets),
                                                          ("cross_attention", self.cross_attention_sets),
                                                          ("ffn", self.ffn_sets)) if sets is not None]

    def set_at(self, component, position):
        """The parameter set (a ``Residual``) that ``component`` runs at ``position``: the one the
        plan's ``index`` gives it."""
        sets = dict(self.components())
        if component not in sets:
            raise InvalidValue(f"this stack has no {component!r}; its components are {', '.join(sets)}")
        return sets[component][self.plan.index(component, position)]

    def replan(self, plan, make_set):
        """Follow ``plan`` (a ``Plan`` of the same N positions) from now on: set j of each component
        becomes ``make_set(component, j)``. Every new set is made before any is put in place, so
        ``make_set`` reads the stack as it was (``set_at`` under the old plan). Returns self."""
        # a Plan, by its N: importing minishare.sharing here would load it with minishare (nn/__init__)
        if getattr(plan, "n_layers", None) != self.plan.n_layers:
            raise InvalidValue(f"a stack of {self.plan.n_layers} positions needs a Plan of "
                               f"{self.plan.n_layers} positions, got {plan!r}")
        made = [(component, ModuleList(make_set(component, j) for j in range(plan.n_sets(component))))
                for component, _ in self.components()]
        for component, sets in made:
            setattr(self, f"{component}_sets", sets)
        self.plan = plan
        return self

    def loop(self, plan):
        """Run the positions of ``plan`` from now on: a plan of any N with as many sets of each
        component as this stack has, so the same parameter sets serve a shallower or a deeper stack
        (an all-shared layer looped r times, chapter 14). Returns self."""
        counts = {component: len(sets) for component, sets in self.components()}
        if any(plan.n_sets(component) != n for component, n in counts.items()):
            raise InvalidValue(f"looping needs a plan with the stack's sets ({counts}), got {plan!r}")
        self.plan = plan
        return self

    def _layer(self, i, x, inputs):
        """Position (or ACT step) i: the coordinate embedding if asked, then the components."""
        if self.timestep:
            x = x + timestep_signal(i, x.shape[1], x.shape[2], x.dtype)
        for component, sets in self.components():
            x = sets[self.plan.index(component, i)](x, **inputs.get(component, {}))
        return x

    def forward(self, x, inputs=None, output_hidden_states=False, output_ponder=False):
        """x (B, T, H); ``inputs[component]`` are the extra keyword arguments of that component
        (masks, the encoder output), none for a component left out. Returns the output (B, T, H),
        followed, when asked, by the list of states between layers (the input of layer i is
        states[i], its output states[i+1]; N + 1 of them, or with ACT one more than the steps
        taken) and by the ``Ponder`` record of ACT (None without ACT)."""
        inputs = self._check_inputs({} if inputs is None else inputs)
        ponder = None
        if self.act is None:
            states = [x]
            for i in range(self.plan.n_layers):
                x = self._layer(i, x, inputs)
                states.append(x)
        else:
            x, ponder = self.act(x, lambda i, s: self._layer(i, s, inputs), self.plan.n_layers)
            states = ponder.states
        if self.final_norm is not None:
            x = self.final_norm(x)
        extras = ([states] if output_hidden_states else []) + ([ponder] if output_ponder else [])
        return (x, *extras) if extras else x

    def _check_inputs(self, inputs):
        names = [component for component, _ in self.components()]
        unknown = [key for key in inputs if key not in names]
        if unknown:
            raise ValueError(f"inputs for {', '.join(map(repr, unknown))}, which this stack does not "
                             f"have; its components are {', '.join(names)}")
        return inputs


def encoder(plan, hidden_size, num_heads, intermediate_size, hidden_act="gelu", norm_position="post",
            hidden_dropout=0.0, attention_dropout=0.0, eps=1e-12, timestep=False, act=False,
            act_epsilon=0.01):
    """An encoder stack: self-attention, then FFN, at every position (``Stack`` explains
    ``timestep`` and ``act``)."""
    return Stack(plan,
                 attention=lambda: MultiHeadAttention(hidden_size, num_heads, attention_dropout),
                 ffn=lambda: FFN(hidden_size, intermediate_size, hidden_act),
                 hidden_size=hidden_size, norm_position=norm_position, dropout=hidden_dropout, eps=eps,
                 timestep=timestep, act=act, act_epsilon=act_epsilon)


def decoder(plan, hidden_size, num_heads, intermediate_size, hidden_act="gelu", norm_position="post",
            hidden_dropout=0.0, attention_dropout=0.0, eps=1e-12, cross_attention=True, timestep=False,
            act=False, act_epsilon=0.01):
    """A decoder stack: masked self-attention, cross-attention to the encoder (unless
    ``cross_attention`` is False: a decoder-only LM), then FFN. With ``act``, a position's halting
    depends on its own state alone, so the causal mask still keeps every position from the future."""
    def attention():
        return MultiHeadAttention(hidden_size, num_heads, attention_dropout)
    return Stack(plan, attention=attention, ffn=lambda: FFN(hidden_size, intermediate_size, hidden_act),
                 cross_attention=attention if cross_attention else None,
                 hidden_size=hidden_size, norm_position=norm_position, dropout=hidden_dropout, eps=eps,
                 timestep=timestep, act=act, act_epsilon=act_epsilon)


__all__ = ["Residual", "FFN", "Stack", "encoder", "decoder", "causal_mask", "timestep_signal"]
