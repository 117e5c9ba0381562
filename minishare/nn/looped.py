"""Looped depth: one shared block iterated r times, its input re-injected before every iteration,
with r chosen when the model runs, so that a model can think longer at test time than it trained.

Yang et al. (2023, "Looped Transformers are Better at Learning Learning Algorithms", Sec. 3) loop
one block M_θ and add the input embedding P back before each pass, "input injection":

    Y_0 = 0,    Y_{t+1} = M_θ(Y_t + P),    t = 0 .. r − 1                 (``injection="add"``)

Geiping et al. (2025, "Scaling up Test-Time Compute with Latent Reasoning: A Recurrent Depth
Approach", Sec. 3) wrap the loop between a prelude P and a coda C of unshared layers and inject by
concatenation, through an adapter A (a Linear 2H -> H):

    e = P(x),    s_i = R(A [s_{i−1}; e]),  i = 1 .. r,    output C(s_r)    (``injection="concat"``)

Here both start from s_0 = 0, as Yang et al. do (Geiping et al. draw s_0 at random), so that the
output is a function of the input alone. The prelude, the recurrent block and the coda are each a
not-shared ``Stack`` of their own layers (Pre-LN, so each ends with its LayerNorm: the state that
enters the next iteration is normalized, and stays bounded however many iterations run). The plan
of one call is ``sharing.looped_plan``: prelude sets once, the recurrent sets r times, coda once.

Training draws r at random each step (``sample_iterations``) and backpropagates through the last
k iterations only (Geiping et al.: r̄ = 32 iterations on average, k = 8). The first r − k
iterations run without a graph, so their output s_{r−k} enters the last k as a constant:

    ∂L/∂θ  (truncated)  =  ∂L(s_r(θ; s_{r−k} fixed), θ)/∂θ

and the activations kept for backward are those of k iterations, not r. With k = r it is the
full gradient.
"""
import math

from minishare import backend, functional as F, sharing
from minishare.checks import check_int
from minishare.errors import InvalidValue
from minishare.nn.layers import Linear
from minishare.nn.module import Module
from minishare.nn.transformer import encoder
from minishare.tensor import Tensor, no_grad

INJECTIONS = ("add", "concat")        # Yang et al. (2023); Geiping et al. (2025)


def check_injection(injection, name="injection"):
    """The one rule of how the input is re-injected (a configuration checks it too, as ``name``)."""
    if not isinstance(injection, str) or injection not in INJECTIONS:
        raise InvalidValue(f"{name} must be 'add' (Yang et al., 2023) or 'concat' (Geiping et al., 2025), "
                           f"got {injection!r}")


def check_iterations(iterations, backprop_iterations=None):
    """(r, k): r >= 1 iterations, of which the last k (1 <= k, at most r; None: all r) get a
    gradient."""
    r = check_int(iterations, "iterations")
    if r < 1:
        raise InvalidValue(f"iterations must be at least 1, got {r}")
    if backprop_iterations is None:
        return r, r
    k = check_int(backprop_iterations, "backprop_iterations")
    if k < 1:
        raise InvalidValue(f"backprop_iterations must be at least 1 (None: all), got {k}")
    return r, min(k, r)


def sample_iterations(rng, mean, sigma=0.5):
    """One training step's r, from a log-normal Poisson as Geiping et al. draw it:
    τ ~ N(log(r̄ − 1) − σ²/2, σ), then r = 1 + Poisson(e^τ). E[e^τ] = r̄ − 1, so E[r] = r̄ (the
    paper writes log r̄ and so has a mean one higher), r >= 1 always, and the heavy right tail
    trains a few steps at many iterations. ``rng``: a ``numpy.random.Generator``; r̄ > 1."""
    if not mean > 1:
        raise InvalidValue(f"the mean number of iterations r̄ must be > 1 (a fixed r needs no draw), got {mean!r}")
    tau = rng.normal(math.log(mean - 1) - sigma ** 2 / 2, sigma)
    return 1 + int(rng.poisson(math.exp(tau)))


class LoopedStack(Module):
    """``n_prelude`` layers, then ``n_recurrent`` layers iterated r times with the prelude's output
    e re-injected before each iteration (``injection``), then ``n_coda`` layers: x (B, T, H) ->
    (B, T, H). Every layer is an encoder layer (self-attention and FFN, Pre-LN).

    ``forward(x, iterations, backprop_iterations=None, mask=None, output_hidden_states=False)``:
    r = ``iterations``; only the last k = ``backprop_iterations`` iterations build a graph (None:
    all). With ``output_hidden_states`` it also returns the state after each iteration,
    [s_1, ..., s_r] (the coda not applied), which is how one pass reads the answer at every r.
    """

    def __init__(self, hidden_size, num_heads, intermediate_size, n_prelude=1, n_recurrent=1, n_coda=0,
                 injection="add", hidden_act="gelu", eps=1e-5):
        super().__init__()
        sharing.looped(n_prelude, n_recurrent, n_coda, 1)            # the plan's rules on P, R, C
        check_injection(injection)
        self.n_prelude, self.n_recurrent, self.n_coda = n_prelude, n_recurrent, n_coda
        self.injection = injection

        def stack(n):        # n distinct layers run once each: a not-shared plan
            return encoder(sharing.Plan.build("not-shared", n), hidden_size, num_heads, intermediate_size,
                           hidden_act=hidden_act, norm_position="pre", eps=eps) if n else None
        self.prelude, self.recurrent, self.coda = stack(n_prelude), stack(n_recurrent), stack(n_coda)
        self.adapter = Linear(2 * hidden_size, hidden_size) if injection == "concat" else None

    def plan(self, iterations):
        """The sharing plan of one call with r = ``iterations``: A B B B C for P = R = C = 1, r = 3."""
        return sharing.looped_plan(self.n_prelude, self.n_recurrent, self.n_coda, iterations)

    def inject(self, s, e):
        """The recurrent block's input: s + e (Yang et al.) or A [s; e] (Geiping et al.). (B, T, H)"""
        if self.adapter is None:
            return s + e
        return self.adapter(F.concatenate([s, e], axis=-1))               # (B, T, 2H) -> (B, T, H)

    def forward(self, x, iterations, backprop_iterations=None, mask=None, output_hidden_states=False):
        r, k = check_iterations(iterations, backprop_iterations)
        inputs = {"attention": {"mask": mask}, "ffn": {}}
        e = x if self.prelude is None else self.prelude(x, inputs)            # (B, T, H)
        s = Tensor(backend.xp.zeros(e.shape, dtype=e.dtype))                # s_0 = 0
        states = []
        with no_grad():            # the first r − k iterations: values only, s_{r−k} a constant
            for _ in range(r - k):
                s = self.recurrent(self.inject(s, e), inputs)
                states.append(s)
        for _ in range(k):         # the last k: the graph that backward walks
            s = self.recurrent(self.inject(s, e), inputs)
            states.append(s)
        out = self.read_out(s, mask)
        return (out, states) if output_hidden_states else out

    def read_out(self, s, mask=None):
        """The coda on a state (the state itself without a coda): how any iteration's state,
        not only the last, is turned into the stack's output."""
        return s if self.coda is None else self.coda(s, {"attention": {"mask": mask}, "ffn": {}})

    def extra_repr(self):
        return (f"n_prelude={self.n_prelude}, n_recurrent={self.n_recurrent}, n_coda={self.n_coda}, "
                f"injection={self.injection!r}")
