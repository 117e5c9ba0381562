"""Which parameter set each layer position uses: the one place where sharing is decided.

A Transformer stack has N layer positions. Each position runs three components: self-attention
(with its LayerNorm), cross-attention (decoders only, with its LayerNorm) and the FFN (with the
LayerNorm after it), the split ALBERT counts parameters by (Lan et al., 2019, Sec. 3.1). A *plan*
maps every position, for every component, to the index of the distinct parameter set it uses.
Models ask the plan and never special-case a strategy::

    plan = Plan.build(sharing="cycle-rev", n_layers=6, n_unique=3)
    attention_sets = [Attention(...) for _ in range(plan.n_sets("attention"))]
    ffn_sets = [FFN(...) for _ in range(plan.n_sets("ffn"))]
    for i in range(plan.n_layers):
        x = attention_sets[plan.index("attention", i)](x)
        x = ffn_sets[plan.index("ffn", i)](x)

Strategies (names accepted by ``Plan.build``):

- Takase & Kiyono (2021, arXiv 2104.06022, Sec. 2): ``"sequence"``, ``"cycle"``, ``"cycle-rev"``,
  M = ``n_unique`` distinct layers serving N = ``n_layers`` positions, every component of a layer
  following the same rule (``sequence``, ``cycle``, ``cycle_rev`` below). ``"cycle-rev-code"`` is
  Cycle (rev) as the authors' released code builds it (``cycle_rev_code``).
- ALBERT (Lan et al., 2019, Sec. 3.1, Table 4): ``"all-shared"``, ``"shared-attention"``,
  ``"shared-ffn"``, ``"not-shared"`` (``ALBERT_TABLE_4``).
- Universal Transformer (Dehghani et al., 2018): ``"universal"``, one layer reused at every depth.
- Looped depth (Yang et al., 2023; Geiping et al., 2025): ``looped_plan``, a prelude, R recurrent
  sets repeated r times and a coda, where r is chosen when the model runs (``minishare.nn.looped``).
- Later plans (``LITERATURE_RULES``): MobileLLM's ``"immediate-block-wise"`` (Liu et al., 2024),
  Mixture-of-Recursions' ``"middle-cycle"`` (Bae et al., 2025) and Subformer's ``"sandwich"``
  (Reid et al., 2021).
- An explicit schedule written by hand: a list such as ``[0, 1, 1, 0]`` for every component, or a
  dict per component such as ``{"attention": [0, 0, 0, 0], "ffn": [0, 1, 2, 3]}``.

Positions and set indices are 0-based: position 0 is the first layer the input goes through (the
paper counts from 1). The checks of bad input come last in this file, after the ideas.
"""
from minishare.checks import check_int, is_int
from minishare.errors import InvalidType, InvalidValue

COMPONENTS = ("attention", "cross_attention", "ffn")
# N positions at most: far beyond the papers' deepest stacks (ALBERT's 48 layers, the Universal
# Transformer's ACT steps), and the bound on a plan built from a number read from a file
MAX_LAYERS = 4096


# ---- Takase & Kiyono (2021), Sec. 2: M distinct layers serve N positions ----------------------
# Worked example, M = 3, N = 6 (their Figure 1):
#     sequence   A A B B C C        cycle   A B C A B C        cycle-rev   A B C C B A
# M = N is the vanilla Transformer and M = 1 the Universal Transformer, under every rule.

def sequence(N, M):
    """Sequence: "the same parameters for sequential floor(N/M) layers". Needs M to divide N."""
    return [i // (N // M) for i in range(N)]


def cycle(N, M):
    """Cycle: stack the M layers, then repeat them in the same order until N are filled."""
    return [i % M for i in range(N)]


def cycle_rev(N, M):
    """Cycle (rev): as Cycle for the first M * (ceil(N/M) - 1) positions, the rest in reverse
    order, so the lowest and the highest layer share parameters. When M does not divide N the
    reversed round is partial and starts from the last set: M = 3, N = 7 gives A B C A B C C."""
    n_cycled = max(M, M * (-(-N // M) - 1))   # never fewer than the M positions that create the sets
    return [i % M if i < n_cycled else M - 1 - i % M for i in range(N)]


def cycle_rev_code(N, M):
    """Cycle (rev) as the authors' fairseq code builds it (github.com/takase/share_layer_params,
    ``share_type == 'cycle_reverse'``): Cycle for max(M, N - M) positions, then the last
    min(M, N - M) take the sets backwards from the last. M = 3, N = 7 gives A B C A C B A. It
    agrees with ``cycle_rev`` when M divides N (every configuration of the paper) or N < 2M."""
    n_cycled = max(M, N - M)
    return [i % M if i < n_cycled else M - 1 - (i - n_cycled) for i in range(N)]


# strategy -> the name of its function here, not the function: ``assign`` looks it up when called,
# so a wrapper put on the module's function (the grader's tripwire, in an exercise that has
# students write these rules) is what runs, and the table holds no answer of its own
TAKASE_KIYONO_RULES = {"sequence": "sequence", "cycle": "cycle", "cycle-rev": "cycle_rev",
                       "cycle-rev-code": "cycle_rev_code"}
TAKASE_KIYONO = tuple(TAKASE_KIYONO_RULES)


def assign(strategy, n_layers, n_unique):
    """0-based parameter set of each of the N = ``n_layers`` positions under Takase & Kiyono's
    ``strategy``, with M = ``n_unique`` sets: ``assign("cycle-rev", 6, 3) == [0, 1, 2, 2, 1, 0]``.

    Where the paper's rule does not give M sets for N positions this raises InvalidValue (a
    ValueError) instead of guessing: the paper assumes 1 <= M <= N, and Sequence's blocks of
    floor(N/M) positions make more than M sets when M does not divide N (M = 2, N = 5 would
    need 3).
    """
    N, M = _check_takase_kiyono(strategy, n_layers, n_unique)
    return globals()[TAKASE_KIYONO_RULES[strategy]](N, M)


# ---- later plans from the literature ----------------------------------------------------------
# Worked examples, N = 6:
#     immediate-block-wise  A A B B C C    middle-cycle (M = 4)  A B C B C D    sandwich  A B B B B C

def immediate_block_wise(N):
    """MobileLLM (Liu et al., 2024, arXiv 2402.14905, "immediate block-wise sharing"):
    each of the N/2 distinct blocks is computed twice in a row, so the second pass finds its
    weights still in the cache. The paper compares it with repeating the whole stack (Cycle) and
    with the reversed order (Cycle (rev)) and keeps this one. It is Sequence with M = N/2."""
    return [i // 2 for i in range(N)]


def middle_cycle(N, M):
    """Middle-Cycle (Bae et al., 2025, arXiv 2507.10524, Mixture-of-Recursions): the first
    and the last layer keep parameters of their own; the N - 2 positions between them cycle
    through the other M - 2 sets. M = 4, N = 6 gives A B C B C D."""
    middle = M - 2
    return [0] + [1 + i % middle for i in range(N - 2)] + [M - 1]


def sandwich(N):
    """The sandwich of Subformer (Reid et al., 2021, arXiv 2101.00234): the first and
    the last layer are their own; every layer between them shares one set. A B B B B C for N = 6
    (the middle-cycle with M = 3)."""
    return [0] + [1] * (N - 2) + [2]


LITERATURE_RULES = {"immediate-block-wise": lambda N, M: immediate_block_wise(N),
                    "middle-cycle": middle_cycle, "sandwich": lambda N, M: sandwich(N)}
LITERATURE = tuple(LITERATURE_RULES)


# ---- ALBERT (Lan et al., 2019), Sec. 3.1, Table 4: which component is shared across layers -----
# A shared component has one set for every position; one that is not has a set per position.
# Cross-attention (decoders) goes with attention.
#                   attention shared, FFN shared
ALBERT_TABLE_4 = {
    "all-shared":       (True,  True),
    "shared-attention": (True,  False),
    "shared-ffn":       (False, True),
    "not-shared":       (False, False),
}
ALBERT = tuple(ALBERT_TABLE_4)
STRATEGIES = TAKASE_KIYONO + ALBERT + ("universal",) + LITERATURE
# the strategies that need M given: the others' M follows from N
TAKES_N_UNIQUE = TAKASE_KIYONO + ("middle-cycle",)


def albert_schedules(strategy, N):
    """One schedule per component for ALBERT's ``strategy`` over N positions."""
    attention_shared, ffn_shared = ALBERT_TABLE_4[strategy]
    attention = [0] * N if attention_shared else list(range(N))
    ffn = [0] * N if ffn_shared else list(range(N))
    return {"attention": attention, "cross_attention": attention, "ffn": ffn}


def named_schedules(strategy, N, M=None):
    """One schedule per component for a named strategy: the plans of the papers above."""
    if strategy in TAKASE_KIYONO:
        return dict.fromkeys(COMPONENTS, assign(strategy, N, M))   # every component alike
    if strategy in LITERATURE:
        return dict.fromkeys(COMPONENTS, LITERATURE_RULES[strategy](*_check_literature(strategy, N, M)))
    return albert_schedules("all-shared" if strategy == "universal" else strategy, N)


# ---- looped depth (Yang et al., 2023; Geiping et al., 2025): a depth chosen at run time ---------
# P prelude sets run once, R recurrent sets run r times, C coda sets run once: P = 1, R = 1, C = 1
# with r = 4 is  A B B B B C.  The plan is the schedule of one call; the model picks r per call.

def looped(n_prelude, n_recurrent, n_coda, iterations):
    """Set index of each of the P + r·R + C positions of a looped stack iterated r times:
    prelude sets 0..P-1, then the R recurrent sets P..P+R-1 repeated r times, then the coda's."""
    P, R, C, r = _check_looped(n_prelude, n_recurrent, n_coda, iterations)
    block = list(range(P, P + R))
    return list(range(P)) + block * r + list(range(P + R, P + R + C))


def looped_plan(n_prelude, n_recurrent, n_coda, iterations):
    """The ``Plan`` of ``looped``: every component follows the same schedule."""
    return Plan(dict.fromkeys(COMPONENTS, looped(n_prelude, n_recurrent, n_coda, iterations)), name="looped")


# ---- the plan ---------------------------------------------------------------------------------
class Plan:
    """Immutable map from (component, layer position) to the index of a distinct parameter set.

    Build one with ``Plan.build``; ``Plan(schedules, name)`` takes one schedule per component in
    ``COMPONENTS`` and checks it. Two plans are equal when every position of every component
    uses the same set, whatever the plans are called: ``cycle`` with M = N equals ``not-shared``.
    """

    __slots__ = ("_schedules", "_name")

    def __init__(self, schedules, name="custom"):
        object.__setattr__(self, "_schedules", _checked_schedules(schedules, name))
        object.__setattr__(self, "_name", name)

    @classmethod
    def build(cls, sharing, n_layers=None, n_unique=None):
        """The plan for ``sharing`` over N = ``n_layers`` positions with M = ``n_unique`` sets.

        ``sharing`` is a strategy name (``STRATEGIES``; Takase & Kiyono's need ``n_unique``) or an
        explicit schedule: a list of set indices for every component, or a dict of lists keyed by
        component, where a missing ``cross_attention`` follows ``attention``; ``n_layers`` may
        then be omitted. ``n_unique``, when given, must agree with the plan: N for
        ``not-shared``, 1 for ``all-shared`` and ``universal``; ``shared-attention`` and
        ``shared-ffn`` mix 1 and N sets, so no single M describes them.
        """
        if isinstance(sharing, str):
            N = _check_named(sharing, n_layers, n_unique)
            plan = cls(named_schedules(sharing, N, n_unique), name=sharing)
        else:
            plan = cls(_explicit(sharing), name="custom")
        _check_agrees(plan, n_layers, n_unique)
        return plan

    @property
    def name(self):
        """Strategy name, or ``"custom"`` for an explicit schedule."""
        return self._name

    @property
    def n_layers(self):
        """N, the number of layer positions."""
        return len(self._schedules["attention"])

    def schedule(self, component):
        """Set index of each position for ``component``, as a tuple."""
        return self._schedules[_check_component(component)]

    def n_sets(self, component):
        """Number of distinct parameter sets ``component`` needs (M for that component)."""
        return max(self.schedule(component)) + 1

    def index(self, component, position):
        """Set that ``component`` uses at layer ``position`` (0 = first layer)."""
        return self.schedule(component)[_check_position(self, position)]

    def positions_of(self, component, set_index):
        """Positions where ``component`` uses set ``set_index``: where its gradient comes from."""
        set_index = _check_set_index(self, component, set_index)
        return [i for i, index in enumerate(self.schedule(component)) if index == set_index]

    def shown_components(self):
        """Components worth showing: ``[None]`` (meaning every component) if all agree, else each
        component, cross_attention only where it differs from attention, which it follows."""
        s = self._schedules
        if s["attention"] == s["cross_attention"] == s["ffn"]:
            return [None]
        return [c for c in COMPONENTS if c != "cross_attention" or s[c] != s["attention"]]

    def __str__(self):
        """Letters per position, first layer on the left: ``A B C C B A``; when components
        differ, one line each::

            attention: A A A A
            ffn:       A B C D
        """
        shown = self.shown_components()
        rows = [[label(i) for i in self._schedules[c or "attention"]] for c in shown]
        width = max(len(letter) for row in rows for letter in row)
        rows = [" ".join(letter.ljust(width) for letter in row).rstrip() for row in rows]
        if shown == [None]:
            return rows[0]
        head = max(len(c) for c in shown) + 2
        return "\n".join(f"{c + ':':<{head}}{row}" for c, row in zip(shown, rows))

    def __repr__(self):
        schedules = ", ".join(f"{c!r}: {self._schedules[c]}" for c in COMPONENTS)
        return f"Plan({{{schedules}}}, name={self._name!r})"

    def __eq__(self, other):
        if not isinstance(other, Plan):
            return NotImplemented
        return self._schedules == other._schedules

    def __hash__(self):
        return hash(tuple(self._schedules[c] for c in COMPONENTS))

    def __setattr__(self, attr, value):
        raise AttributeError("a Plan is immutable; build a new one with Plan.build")

    def __delattr__(self, attr):
        raise AttributeError("a Plan is immutable; build a new one with Plan.build")


def label(index):
    """Letter of set ``index``: A..Z, then A1..Z1, A2.. (the papers name sets A, B, C)."""
    letter = chr(ord("A") + index % 26)
    return letter if index < 26 else f"{letter}{index // 26}"


# ---- checks: bad input gets an error that names the rule it breaks ----------------------------
def _check_takase_kiyono(strategy, n_layers, n_unique):
    """(N, M) for ``assign``, where the paper's rule gives M distinct sets for N positions."""
    if not isinstance(strategy, str) or strategy not in TAKASE_KIYONO:
        raise InvalidValue(
            f"unknown Takase & Kiyono strategy {strategy!r}; known: {', '.join(TAKASE_KIYONO)}")
    N, M = _check_n_layers(n_layers), check_int(n_unique, "n_unique")
    if not 1 <= M <= N:
        raise InvalidValue(f"{strategy} needs 1 <= n_unique <= n_layers, got n_unique={M}, "
                           f"n_layers={N}: M distinct layers serve N positions (Takase & Kiyono, Sec. 2)")
    if strategy == "sequence" and N % M:
        raise InvalidValue(f"sequence needs n_unique to divide n_layers, got n_unique={M}, n_layers={N}: "
                           f"blocks of floor(N/M) = {N // M} positions would make "
                           f"{-(-N // (N // M))} sets, not {M} (Takase & Kiyono, Sec. 2)")
    return N, M


def _check_looped(n_prelude, n_recurrent, n_coda, iterations):
    """(P, R, C, r) of a looped stack: R >= 1 recurrent sets run r >= 1 times, P, C >= 0, and at
    most MAX_LAYERS positions in all."""
    P, C = (check_int(n, name) for n, name in ((n_prelude, "n_prelude"), (n_coda, "n_coda")))
    R, r = check_int(n_recurrent, "n_recurrent"), check_int(iterations, "iterations")
    if min(P, C) < 0 or min(R, r) < 1:
        raise InvalidValue(f"a looped stack needs n_prelude >= 0, n_recurrent >= 1, n_coda >= 0 and "
                           f"iterations >= 1, got {P}, {R}, {C} and {r}")
    if P + r * R + C > MAX_LAYERS:
        raise InvalidValue(f"{P} + {r}·{R} + {C} positions; a plan has at most {MAX_LAYERS:,} "
                           "(sharing.MAX_LAYERS)")
    return P, R, C, r


def _check_literature(strategy, N, M):
    """(N, M) where the later plans' rules are defined: they need an even N (MobileLLM's blocks
    come in pairs), at least the first and last layer (sandwich), or 3 <= M <= N (middle-cycle:
    two unique ends and at least one set to cycle)."""
    if strategy == "immediate-block-wise" and N % 2:
        raise InvalidValue(f"immediate-block-wise needs an even n_layers, got {N}: every block runs "
                           "twice in a row (Liu et al., 2024, MobileLLM)")
    if strategy == "sandwich" and N < 3:
        raise InvalidValue(f"sandwich needs n_layers >= 3, got {N}: a unique first and last layer "
                           "with shared layers between them (Reid et al., 2021)")
    if strategy == "middle-cycle":
        M = check_int(M, "n_unique")
        if not 3 <= M <= N:
            raise InvalidValue(f"middle-cycle needs 3 <= n_unique <= n_layers, got n_unique={M}, "
                               f"n_layers={N}: the first and last layer are unique and the middle "
                               "cycles through the other M - 2 sets (Bae et al., 2025)")
    return N, M


def _check_n_layers(n_layers):
    """N as an int in [1, MAX_LAYERS], checked before a plan of that length is built."""
    N = check_int(n_layers, "n_layers")
    if N < 1:
        raise InvalidValue(f"n_layers must be at least 1, got {N}")
    if N > MAX_LAYERS:
        raise InvalidValue(f"n_layers must be at most {MAX_LAYERS:,} (sharing.MAX_LAYERS), got {N:,}")
    return N


def _check_named(sharing, n_layers, n_unique):
    """N for a named strategy, which needs n_layers (and Takase & Kiyono's n_unique)."""
    if sharing not in STRATEGIES:
        raise InvalidValue(f"unknown sharing strategy {sharing!r}; known: {', '.join(STRATEGIES)}")
    if n_layers is None:
        raise InvalidValue(f"{sharing} needs n_layers")
    if sharing in TAKES_N_UNIQUE and n_unique is None:
        raise InvalidValue(f"{sharing} needs n_unique, the number M of distinct layers")
    return _check_n_layers(n_layers)


def _explicit(sharing):
    """One schedule per component from a list or a dict of lists."""
    if isinstance(sharing, dict):
        unknown = sorted(set(map(str, sharing)) - set(COMPONENTS))
        if unknown:
            raise InvalidValue(f"unknown component(s) {unknown}; known: {', '.join(COMPONENTS)}")
        missing = [c for c in ("attention", "ffn") if c not in sharing]
        if missing:
            raise InvalidValue(f"explicit schedule is missing {', '.join(missing)}; only "
                               "cross_attention may be left out (it then follows attention)")
        return {c: sharing.get(c, sharing["attention"]) for c in COMPONENTS}
    if hasattr(sharing, "__iter__"):
        return dict.fromkeys(COMPONENTS, tuple(sharing))
    raise InvalidType(f"sharing must be a strategy name, a list or a dict of lists, got {sharing!r}; "
                      f"strategies: {', '.join(STRATEGIES)}")


def _check_agrees(plan, n_layers, n_unique):
    """A given n_layers and n_unique describe ``plan``."""
    if n_layers is not None and check_int(n_layers, "n_layers") != plan.n_layers:
        raise InvalidValue(f"explicit schedule has {plan.n_layers} positions but n_layers={n_layers}")
    if n_unique is None:
        return
    M, counts = check_int(n_unique, "n_unique"), {c: plan.n_sets(c) for c in COMPONENTS}
    if set(counts.values()) == {M}:
        return
    if plan.name == "custom":
        raise InvalidValue(f"n_unique={M} disagrees with the schedule's sets per component {counts}")
    if len(set(counts.values())) > 1:
        raise InvalidValue(f"{plan.name} uses 1 set for one component and n_layers={plan.n_layers} "
                           f"for the other, so no single n_unique describes it; pass n_unique=None "
                           f"(got {M})")
    raise InvalidValue(f"{plan.name} has n_unique={counts['ffn']} for n_layers={plan.n_layers}, "
                       f"got n_unique={M}")


def _checked_schedules(schedules, name):
    """Plan's one check of its value: a schedule per component, all of one length, each using
    exactly the sets 0..max (a gap would create a parameter set that no position uses)."""
    if not isinstance(name, str):
        raise InvalidType(f"name must be a str, got {name!r}")
    if set(schedules) != set(COMPONENTS):
        raise InvalidValue(f"a plan needs one schedule for each of {', '.join(COMPONENTS)}; "
                           f"got {', '.join(map(str, schedules)) or 'none'}")
    checked = {c: _checked_schedule(schedules[c], f"schedule[{c!r}]") for c in COMPONENTS}
    lengths = {c: len(s) for c, s in checked.items()}
    if len(set(lengths.values())) != 1:
        raise InvalidValue(f"every component needs one entry per layer position; lengths {lengths}")
    return checked


def _checked_schedule(schedule, name):
    if isinstance(schedule, (str, bytes)) or not hasattr(schedule, "__iter__"):
        raise InvalidType(f"{name} must be a list of set indices, got {schedule!r}")
    schedule = tuple(schedule)
    if not schedule:
        raise InvalidValue(f"{name} is empty: a plan needs at least one layer position")
    if len(schedule) > MAX_LAYERS:
        raise InvalidValue(f"{name} has {len(schedule):,} positions; n_layers must be at most "
                           f"{MAX_LAYERS:,} (sharing.MAX_LAYERS)")
    for position, index in enumerate(schedule):
        if not is_int(index):
            raise InvalidType(f"{name}[{position}] must be an int set index, got {index!r}")
        if index < 0:
            raise InvalidValue(f"{name}[{position}] is {index}; set indices start at 0")
        if index >= len(schedule):    # (and the check of unused sets below stays small)
            raise InvalidValue(f"{name}[{position}] is {index}, but {len(schedule)} positions can use "
                               f"at most the sets 0..{len(schedule) - 1}")
    schedule = tuple(int(index) for index in schedule)
    unused = sorted(set(range(max(schedule) + 1)) - set(schedule))
    if unused:
        raise InvalidValue(f"{name} {list(schedule)} never uses set(s) {unused}: the sets used must "
                           f"be exactly 0..{max(schedule)}, or a parameter set would be created that "
                           "no position uses")
    return schedule


def _check_component(component):
    if component not in COMPONENTS:
        raise InvalidValue(f"unknown component {component!r}; known: {', '.join(COMPONENTS)}")
    return component


def _check_position(plan, position):
    position = check_int(position, "position")
    if not 0 <= position < plan.n_layers:
        raise IndexError(f"position {position} outside 0..{plan.n_layers - 1}")
    return position


def _check_set_index(plan, component, set_index):
    last, set_index = plan.n_sets(component) - 1, check_int(set_index, "set_index")
    if not 0 <= set_index <= last:
        raise IndexError(f"{component} has sets 0..{last}, got set_index={set_index}")
    return set_index
