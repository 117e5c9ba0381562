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
  M = ``n_unique`` distinct layers serving N = ``n_layers`` positions; every component of a layer
  follows the same assignment (see ``assign``). ``"cycle-rev"`` is Cycle (rev) as the paper's
  text defines it, ``"cycle-rev-code"`` as the authors' released code builds it; the two differ
  only when M does not divide N (and N > 2M).
- ALBERT (Lan et al., 2019, Sec. 3.1, Table 4): ``"not-shared"``, ``"all-shared"``,
  ``"shared-attention"``, ``"shared-ffn"``.
- Universal Transformer (Dehghani et al., 2018): ``"universal"``, one layer reused at every depth.
- An explicit schedule written by hand: a list such as ``[0, 1, 1, 0]`` for every component, or a
  dict per component such as ``{"attention": [0, 0, 0, 0], "ffn": [0, 1, 2, 3]}``.

Positions and set indices are 0-based: position 0 is the first layer the input goes through.
"""

from numbers import Integral

COMPONENTS = ("attention", "cross_attention", "ffn")

TAKASE_KIYONO = ("sequence", "cycle", "cycle-rev", "cycle-rev-code")
ALBERT = ("not-shared", "all-shared", "shared-attention", "shared-ffn")
STRATEGIES = TAKASE_KIYONO + ALBERT + ("universal",)
# N positions at most: far beyond the papers' deepest stacks (ALBERT's 48 layers, the Universal
# Transformer's ACT steps), and the bound on a plan built from a number read from a file
MAX_LAYERS = 4096


def _check_int(value, name):
    """Return ``value`` as an int; bools and floats are refused (6.0 layers is a bug upstream)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    return int(value)


def _check_n_layers(n_layers):
    """N as an int in [1, MAX_LAYERS], checked before a plan of that length is built."""
    N = _check_int(n_layers, "n_layers")
    if N < 1:
        raise ValueError(f"n_layers must be at least 1, got {N}")
    if N > MAX_LAYERS:
        raise ValueError(f"n_layers must be at most {MAX_LAYERS:,} (sharing.MAX_LAYERS), got {N:,}")
    return N


def assign(strategy, n_layers, n_unique):
    """0-based parameter set of each of the N positions under Takase & Kiyono's strategies.

    With M = ``n_unique`` distinct sets and N = ``n_layers`` positions, 1 <= M <= N, position i
    (0-based; the paper counts layers from 1) uses set

    - ``"sequence"``:  i // (N / M). The same parameters go to sequential floor(N/M) layers
      (Takase & Kiyono, Sec. 2): consecutive blocks of N/M positions share one set.
    - ``"cycle"``:     i mod M. Stack the M sets, then repeat them in the same order until N
      positions are filled (Sec. 2); a last partial round uses the first N mod M sets.
    - ``"cycle-rev"``: i mod M for the first M * (ceil(N/M) - 1) positions, as Cycle; the remaining
      positions take the sets in reverse order, M - 1 - (i mod M) (Sec. 2). The lowest and the
      highest layer then share parameters. When M does not divide N the reversed round is partial
      and starts from the last set: M = 3, N = 7 gives A B C A B C C. The first M positions
      always create the M sets, so M = N gives A B C ... in order, as for every strategy.
    - ``"cycle-rev-code"``: Cycle (rev) as the authors' released fairseq code builds it
      (github.com/takase/share_layer_params, ``share_type == 'cycle_reverse'`` in
      fairseq/models/transformer.py): the first max(M, N - M) positions follow Cycle and the
      last min(M, N - M) take the sets in reverse order from the last, M - 1 - j for the j-th of
      them. M = 3, N = 7 gives A B C A C B A: the lowest and the highest layer share parameters
      whatever N is, where the text's rule gives A B C A B C C. The two rules agree whenever M
      divides N, which covers every configuration in the paper, and whenever N < 2M (a single
      reversed round, partial either way); they differ for N > 2M. (The code is given the number
      of positions per set, ``share_layer_num``, and takes M = ceil(N / share_layer_num); here
      M is given directly.)

    Worked example, M = 3, N = 6 (Sec. 2, Figure 1)::

        sequence   [0, 0, 1, 1, 2, 2]   A A B B C C
        cycle      [0, 1, 2, 0, 1, 2]   A B C A B C
        cycle-rev  [0, 1, 2, 2, 1, 0]   A B C C B A   (cycle-rev-code: the same)

    M = N is the vanilla Transformer and M = 1 the Universal Transformer, under every strategy.

    Where the paper's rule does not give M distinct sets for N positions, this raises ValueError
    instead of guessing:

    - M < 1 or M > N: the paper assumes 1 <= M <= N.
    - ``"sequence"`` with N not a multiple of M: the paper's blocks have floor(N/M) positions, and
      ceil(N / floor(N/M)) blocks are more than M sets (M = 2, N = 5 would need 3). Cycle and
      both Cycle (rev) rules are defined for every 1 <= M <= N.

    Example: ``assign("cycle-rev", 6, 3) == [0, 1, 2, 2, 1, 0]``.
    """
    if not isinstance(strategy, str) or strategy not in TAKASE_KIYONO:
        raise ValueError(
            f"unknown Takase & Kiyono strategy {strategy!r}; known: {', '.join(TAKASE_KIYONO)}"
        )
    N = _check_n_layers(n_layers)
    M = _check_int(n_unique, "n_unique")
    if not 1 <= M <= N:
        raise ValueError(
            f"{strategy} needs 1 <= n_unique <= n_layers, got n_unique={M}, n_layers={N}: "
            "M distinct layers serve N positions (Takase & Kiyono, Sec. 2)"
        )
    if strategy == "sequence":
        if N % M:
            raise ValueError(
                f"sequence needs n_unique to divide n_layers, got n_unique={M}, n_layers={N}: "
                f"blocks of floor(N/M) = {N // M} positions would make "
                f"{-(-N // (N // M))} sets, not {M} (Takase & Kiyono, Sec. 2)"
            )
        return [i // (N // M) for i in range(N)]
    if strategy == "cycle":
        return [i % M for i in range(N)]
    if strategy == "cycle-rev-code":
        n_cycled = max(M, N - M)   # the code's M new layers, then N - 2M copies in Cycle order
        return [i % M if i < n_cycled else M - 1 - (i - n_cycled) for i in range(N)]
    # M * (ceil(N/M) - 1) positions follow Cycle, and never fewer than the M that create the sets
    # (for M = N the product is 0, yet every position has its own new layer)
    n_cycled = max(M, M * (-(-N // M) - 1))
    return [i % M if i < n_cycled else M - 1 - i % M for i in range(N)]


def _check_schedule(schedule, name):
    """Validate one explicit schedule and return it as a tuple of ints.

    The sets used must be exactly 0..max: a gap would create a parameter set that no position uses.
    """
    if isinstance(schedule, (str, bytes)) or not hasattr(schedule, "__iter__"):
        raise TypeError(f"{name} must be a list of set indices, got {schedule!r}")
    schedule = tuple(schedule)
    if not schedule:
        raise ValueError(f"{name} is empty: a plan needs at least one layer position")
    if len(schedule) > MAX_LAYERS:
        raise ValueError(f"{name} has {len(schedule):,} positions; n_layers must be at most "
                         f"{MAX_LAYERS:,} (sharing.MAX_LAYERS)")
    for position, index in enumerate(schedule):
        if isinstance(index, bool) or not isinstance(index, Integral):
            raise TypeError(f"{name}[{position}] must be an int set index, got {index!r}")
        if index < 0:
            raise ValueError(f"{name}[{position}] is {index}; set indices start at 0")
        if index >= len(schedule):    # (and the check of unused sets below stays small)
            raise ValueError(f"{name}[{position}] is {index}, but {len(schedule)} positions can use "
                             f"at most the sets 0..{len(schedule) - 1}")
    schedule = tuple(int(index) for index in schedule)
    unused = sorted(set(range(max(schedule) + 1)) - set(schedule))
    if unused:
        raise ValueError(
            f"{name} {list(schedule)} never uses set(s) {unused}: the sets used must be exactly "
            f"0..{max(schedule)}, or a parameter set would be created that no position uses"
        )
    return schedule


def _label(index):
    """Letter of set ``index``: A..Z, then A1..Z1, A2.. (the papers name sets A, B, C)."""
    letter = chr(ord("A") + index % 26)
    return letter if index < 26 else f"{letter}{index // 26}"


class Plan:
    """Immutable map from (component, layer position) to the index of a distinct parameter set.

    Build one with ``Plan.build``; ``Plan(schedules, name)`` takes one schedule per component in
    ``COMPONENTS`` and validates it. Two plans are equal when every position of every component
    uses the same set, whatever the plans are called: ``cycle`` with M = N equals ``not-shared``.
    """

    __slots__ = ("_schedules", "_name")

    def __init__(self, schedules, name="custom"):
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {name!r}")
        if set(schedules) != set(COMPONENTS):
            raise ValueError(
                f"a plan needs one schedule for each of {', '.join(COMPONENTS)}; "
                f"got {', '.join(map(str, schedules)) or 'none'}"
            )
        checked = {c: _check_schedule(schedules[c], f"schedule[{c!r}]") for c in COMPONENTS}
        lengths = {c: len(s) for c, s in checked.items()}
        if len(set(lengths.values())) != 1:
            raise ValueError(
                f"every component needs one entry per layer position; lengths {lengths}"
            )
        object.__setattr__(self, "_schedules", checked)
        object.__setattr__(self, "_name", name)

    def __setattr__(self, attr, value):
        raise AttributeError("a Plan is immutable; build a new one with Plan.build")

    def __delattr__(self, attr):
        raise AttributeError("a Plan is immutable; build a new one with Plan.build")

    @classmethod
    def build(cls, sharing, n_layers=None, n_unique=None):
        """The plan for ``sharing`` over ``n_layers`` positions.

        ``sharing`` is a strategy name or an explicit schedule.

        - ``"sequence"``, ``"cycle"``, ``"cycle-rev"`` and ``"cycle-rev-code"`` (Takase & Kiyono,
          Sec. 2; the last is Cycle (rev) as the authors' code builds it): every component follows
          ``assign(sharing, n_layers, n_unique)``; ``n_unique`` (M) is required.
        - ALBERT's cross-layer sharing variants (Lan et al., 2019, Sec. 3.1, Table 4):
          ``"not-shared"`` (each position its own sets, M = N), ``"all-shared"`` (one set per
          component), ``"shared-attention"`` (one attention set, also for cross-attention, and an
          FFN per position), ``"shared-ffn"`` (one FFN set, attention per position).
        - ``"universal"``: the Universal Transformer's one layer at every depth (Dehghani et al.,
          2018), M = 1; as a plan it equals ``"all-shared"``.
        - A list of set indices, applied to every component, or a dict of lists keyed by component;
          in a dict a missing ``cross_attention`` follows ``attention``, while ``attention`` and
          ``ffn`` are required. ``n_layers`` may be omitted (the schedule's length is used).

        ``n_unique`` must be None or agree with the plan: N for ``not-shared``, 1 for
        ``all-shared`` and ``universal``, and for an explicit schedule the number of sets of every
        component. ``shared-attention`` and ``shared-ffn`` mix 1 and N sets, so no single M
        describes them and ``n_unique`` must be None.
        """
        if isinstance(sharing, str):
            return cls._build_named(sharing, n_layers, n_unique)
        if isinstance(sharing, dict):
            unknown = sorted(set(map(str, sharing)) - set(COMPONENTS))
            if unknown:
                raise ValueError(f"unknown component(s) {unknown}; known: {', '.join(COMPONENTS)}")
            missing = [c for c in ("attention", "ffn") if c not in sharing]
            if missing:
                raise ValueError(
                    f"explicit schedule is missing {', '.join(missing)}; only cross_attention may "
                    "be left out (it then follows attention)"
                )
            schedules = {c: sharing.get(c, sharing["attention"]) for c in COMPONENTS}
        elif hasattr(sharing, "__iter__"):
            schedules = {c: tuple(sharing) for c in COMPONENTS}
        else:
            raise TypeError(
                f"sharing must be a strategy name, a list or a dict of lists, got {sharing!r}; "
                f"strategies: {', '.join(STRATEGIES)}"
            )
        plan = cls(schedules, name="custom")
        if n_layers is not None and _check_int(n_layers, "n_layers") != plan.n_layers:
            raise ValueError(
                f"explicit schedule has {plan.n_layers} positions but n_layers={n_layers}"
            )
        if n_unique is not None:
            M = _check_int(n_unique, "n_unique")
            counts = {c: plan.n_sets(c) for c in COMPONENTS}
            if any(count != M for count in counts.values()):
                raise ValueError(
                    f"n_unique={M} disagrees with the schedule's sets per component {counts}"
                )
        return plan

    @classmethod
    def _build_named(cls, sharing, n_layers, n_unique):
        if sharing not in STRATEGIES:
            raise ValueError(
                f"unknown sharing strategy {sharing!r}; known: {', '.join(STRATEGIES)}"
            )
        if n_layers is None:
            raise ValueError(f"{sharing} needs n_layers")
        N = _check_n_layers(n_layers)
        if sharing in TAKASE_KIYONO:
            if n_unique is None:
                raise ValueError(f"{sharing} needs n_unique, the number M of distinct layers")
            schedule = assign(sharing, N, n_unique)
            return cls({c: schedule for c in COMPONENTS}, name=sharing)

        M = _check_int(n_unique, "n_unique") if n_unique is not None else None
        own = list(range(N))  # each position its own set
        one = [0] * N  # one set for every position
        if sharing == "not-shared":
            expected, attention, ffn = N, own, own
        elif sharing in ("all-shared", "universal"):
            expected, attention, ffn = 1, one, one
        elif sharing == "shared-attention":
            expected, attention, ffn = None, one, own
        else:  # shared-ffn
            expected, attention, ffn = None, own, one
        if M is not None and M != expected:
            if expected is None:
                raise ValueError(
                    f"{sharing} uses 1 set for one component and n_layers={N} for the other, so "
                    f"no single n_unique describes it; pass n_unique=None (got {M})"
                )
            raise ValueError(
                f"{sharing} has n_unique={expected} for n_layers={N}, got n_unique={M}"
            )
        return cls({"attention": attention, "cross_attention": attention, "ffn": ffn}, name=sharing)

    @property
    def name(self):
        """Strategy name, or ``"custom"`` for an explicit schedule."""
        return self._name

    @property
    def n_layers(self):
        """N, the number of layer positions."""
        return len(self._schedules["attention"])

    def _component(self, component):
        if component not in COMPONENTS:
            raise ValueError(f"unknown component {component!r}; known: {', '.join(COMPONENTS)}")
        return self._schedules[component]

    def schedule(self, component):
        """Set index of each position for ``component``, as a tuple."""
        return self._component(component)

    def n_sets(self, component):
        """Number of distinct parameter sets ``component`` needs (M for that component)."""
        return max(self._component(component)) + 1

    def index(self, component, position):
        """Set that ``component`` uses at layer ``position`` (0 = first layer)."""
        schedule = self._component(component)
        position = _check_int(position, "position")
        if not 0 <= position < len(schedule):
            raise IndexError(f"position {position} outside 0..{len(schedule) - 1}")
        return schedule[position]

    def positions_of(self, component, set_index):
        """Positions where ``component`` uses set ``set_index``: where its gradient comes from."""
        schedule = self._component(component)
        set_index = _check_int(set_index, "set_index")
        if not 0 <= set_index <= max(schedule):
            raise IndexError(f"{component} has sets 0..{max(schedule)}, got set_index={set_index}")
        return [position for position, index in enumerate(schedule) if index == set_index]

    def _shown(self):
        """Components worth showing: one if all agree; cross_attention only where it differs."""
        s = self._schedules
        if s["attention"] == s["cross_attention"] == s["ffn"]:
            return [None]
        return [c for c in COMPONENTS if c != "cross_attention" or s[c] != s["attention"]]

    def __str__(self):
        """Letters per position, first layer on the left: ``A B C C B A``.

        When components differ, one line each (cross_attention only where it differs from
        attention, which it follows by default)::

            attention: A A A A
            ffn:       A B C D
        """
        shown = self._shown()
        schedules = [self._schedules[c or "attention"] for c in shown]
        width = max(len(_label(i)) for s in schedules for i in s)
        rows = [" ".join(_label(i).ljust(width) for i in s).rstrip() for s in schedules]
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

    def _repr_svg_(self):
        """Jupyter draws a plan that ends a cell: one column of boxes per component, first layer
        at the bottom, coloured by parameter set (``minishare.analysis.display.plan_svg``)."""
        from minishare.analysis.display import plan_svg
        return plan_svg(self)

    def draw(self, ax=None, component=None):
        """Draw the plan as a grid: rows are positions, the first layer at the bottom; columns
        are parameter sets; a filled cell marks the set a position uses. Returns the Axes.

        ``component`` picks one component; by default all components appear, side by side when
        they differ (cross_attention only where it differs from attention). Needs matplotlib.
        """
        try:
            import matplotlib.pyplot as plt
            from matplotlib.patches import Rectangle
        except ImportError as error:
            raise ImportError("Plan.draw needs matplotlib: pip install matplotlib") from error
        shown = [component] if component is not None else self._shown()
        columns = []  # (tick label, schedule, set index), left to right
        boundaries = []  # x between two components' columns
        for c in shown:
            schedule = self._component(c or "attention")
            prefix = "" if c is None or component is not None else f"{c} "
            if columns:
                boundaries.append(len(columns) - 0.5)
            columns += [(prefix + _label(k), schedule, k) for k in range(max(schedule) + 1)]
        if ax is None:
            _, ax = plt.subplots(figsize=(1 + 0.5 * len(columns), 1 + 0.4 * self.n_layers))
        for x in boundaries:
            ax.axvline(x, color="gray", linewidth=1)
        for x, (_, schedule, k) in enumerate(columns):
            for y, index in enumerate(schedule):  # y = 0 is the first layer, drawn at the bottom
                if index == k:
                    ax.add_patch(Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, color="tab:blue"))
        ax.set_xlim(-0.5, len(columns) - 0.5)
        ax.set_ylim(-0.5, self.n_layers - 0.5)
        ax.set_xticks(range(len(columns)))
        ax.set_xticklabels([label for label, _, _ in columns], rotation=90 if len(shown) > 1 else 0)
        ax.set_yticks(range(self.n_layers))
        ax.set_xlabel("parameter set")
        ax.set_ylabel("layer position (0 = first layer, at the bottom)")
        title = self._name if component is None else f"{self._name}: {component}"
        ax.set_title(f"{title} (N = {self.n_layers})")
        return ax
