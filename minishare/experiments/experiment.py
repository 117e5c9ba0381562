"""What an experiment of ``reproduce`` is, written down once: a module that fills in the names
below. ``Experiment.of(module)`` checks that it does and is what the pipeline calls; nothing else
looks into an experiment module. A template (the toy experiment of ``tests/toy_experiment.py`` is
a complete one)::

    NAME = "tying"                         # its folder under OUT and its --only name
    TITLE = "Tied against untied output layer"        # its section of the report
    ORDER = 60                             # where the section sits in the report (ascending)
    READS = ("albert", "pretrain_steps")   # the fields of ``settings.Settings`` it reads
    TIERS = {"quick": {"depth": 2}, "full": {"depth": 4}, "long": {"depth": 4}}   # optional:
                                           # settings of its own, one dict per tier, same keys
    SEEDS = "few_seeds"                    # optional: another seeds field of Settings

    def requests(settings, out): ...       # optional: {run name: run_training arguments}
    def later_requests(settings, out): ... # optional: the runs a later stage of ``requests`` will ask
                                           # for, as stand-ins of the same cost, for the estimate
    def trains_here(settings): ...         # optional: {label: (updates, make)}, the training ``run``
                                           # does in its own process: ``make(steps)`` returns a
                                           # ``Trainer`` of that kind for ``steps`` updates, which
                                           # ``reproduce`` times for its estimate before anything trains;
                                           # with --jobs > 1 its ``run`` goes to a fresh worker process
                                           # beside the others that declare it
    def run(out, settings, progress=True): ...        # -> result, plain JSON data
    def figures(result, folder): ...       # -> [(caption, [paths])], each figure saved as PNG and SVG
    def report(result, figures): ...       # -> Markdown
    def observations(result): ...          # optional: [sentences], facts of one model at a time
    def claims(result, seeds): ...         # optional: [claims.compare(...)], every comparison of arms
    def baselines(result, settings): ...   # optional: [claims.baseline(...)], the no-model rules
    def book_rows(settings, said): ...     # optional: the book's table NAME, what the papers report
                                           # against what this run measured, as (claim, paper,
                                           # measure(result)) rows (``book_cells``; ``said(id)`` is the
                                           # ledger's sentence of a claim)
    BOOK_TABLES = ("params_table1",)       # optional, instead of book_rows: tables of other layouts ...
    def book_tables(result, settings, said): ...      # ... {name: Markdown}

The settings an experiment gets are a ``View``: the shared fields it declares in ``READS``, its
own ``TIERS`` fields, ``quick`` and ``seeds``. Reading anything else is an error, so the
declaration is complete, and it is the experiment's cache key: a change to a field it does not
read never retrains it.

``requests`` is called again and again until it asks for nothing that is not trained yet, with
the runs it asked for before trained in ``out``: an experiment whose later runs depend on earlier
ones (``exp_takase``: the comparison's runs at the learning rates its search chose) asks for the
first stage, then for more.
"""
import dataclasses
import json
import types

from minishare import data
from minishare.errors import InvalidValue
from minishare.experiments import book_cells

REQUIRED = ("NAME", "TITLE", "ORDER", "READS", "run", "figures", "report")
TIER_NAMES = ("quick", "full", "long")


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One experiment, as ``reproduce`` sees it (see the module's docstring)."""
    name: str
    title: str
    order: float
    reads: tuple
    tiers: dict
    seeds_field: str
    book_table_names: tuple
    module: types.ModuleType

    @classmethod
    def of(cls, module):
        """The experiment ``module`` declares; one error naming every name it lacks or gets wrong."""
        where = getattr(module, "__name__", repr(module))
        missing = [n for n in REQUIRED if not hasattr(module, n)]
        if missing:
            raise InvalidValue(f"experiment module {where} lacks {', '.join(missing)} (see minishare.experiments.experiment)")
        if not isinstance(module.NAME, str) or not module.NAME.isidentifier():
            raise InvalidValue(f"{where}: NAME must be an identifier, got {module.NAME!r}")
        tiers = getattr(module, "TIERS", {name: {} for name in TIER_NAMES})
        if set(tiers) != set(TIER_NAMES) or len({frozenset(t) for t in tiers.values()}) != 1:
            raise InvalidValue(f"{where}: TIERS must give the tiers {', '.join(TIER_NAMES)} the same fields, "
                               f"got {({k: sorted(v) for k, v in tiers.items()})}")
        tables = tuple(getattr(module, "BOOK_TABLES", ()))
        if bool(tables) != hasattr(module, "book_tables"):
            raise InvalidValue(f"{where}: BOOK_TABLES and book_tables come together (the names the book includes, "
                               "and the function that writes them)")
        if hasattr(module, "book_rows"):
            if tables:
                raise InvalidValue(f"{where}: book_rows or book_tables, not both")
            tables = (module.NAME,)
        return cls(module.NAME, module.TITLE, module.ORDER, tuple(module.READS), tiers,
                   getattr(module, "SEEDS", "seeds"), tables, module)

    def settings(self, settings):
        """The View of ``settings`` (a ``settings.Settings`` tier) this experiment reads."""
        shared = {name: getattr(settings, name) for name in self.reads}
        own = self.tiers[settings.tier]
        clash = set(shared) & set(own)
        if clash:
            raise InvalidValue(f"experiment {self.name!r}: TIERS redefines the shared settings {sorted(clash)}")
        return View(self.name, {"quick": settings.quick, "tier": settings.tier,
                                "seeds": getattr(settings, self.seeds_field), **shared, **own})

    def requests(self, view, out):
        return self.module.requests(view, out) if hasattr(self.module, "requests") else {}

    def later_requests(self, view, out):
        return self.module.later_requests(view, out) if hasattr(self.module, "later_requests") else {}

    def trains_here(self, view):
        return self.module.trains_here(view) if hasattr(self.module, "trains_here") else {}

    def run(self, out, view, progress=True):
        return self.module.run(out, view, progress=progress)

    def figures(self, result, folder):
        return self.module.figures(result, folder)

    def report(self, result, figures):
        return self.module.report(result, figures)

    def observations(self, result):
        return self.module.observations(result) if hasattr(self.module, "observations") else []

    def claims(self, result, seeds):
        return self.module.claims(result, seeds) if hasattr(self.module, "claims") else []

    def baselines(self, result, view):
        return self.module.baselines(result, view) if hasattr(self.module, "baselines") else []

    def book_tables(self, result, saved_settings, said):
        """{table name: Markdown} for the book, from a committed result and its saved settings;
        every name of ``BOOK_TABLES``, no other (``book_rows``: the one table named after the
        experiment)."""
        if hasattr(self.module, "book_rows"):
            rows = self.module.book_rows(saved_settings, said)
            return {self.name: book_cells.claims_table(self.name, rows, result, saved_settings)}
        tables = self.module.book_tables(result, saved_settings, said) if self.book_table_names else {}
        if set(tables) != set(self.book_table_names):
            raise InvalidValue(f"experiment {self.name!r}: book_tables wrote {sorted(tables)}, "
                               f"BOOK_TABLES names {sorted(self.book_table_names)}")
        return tables


class View:
    """The settings one experiment may read (``Experiment.settings``); any other field is an
    error naming the experiment, so its ``READS`` cannot fall behind its code."""

    def __init__(self, experiment, fields):
        self._experiment, self._fields = experiment, fields

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._fields[name]
        except KeyError:
            raise InvalidValue(f"experiment {self._experiment!r} reads settings.{name}, which its READS "
                               "does not declare: add it there (it becomes part of the cache key)") from None

    def key(self):
        """The cache key: every field of the view (as JSON data) and the data pipeline's version."""
        fields = json.loads(json.dumps({k: v for k, v in self._fields.items() if k != "tier"}))
        return {"data_pipeline": data.PIPELINE_VERSION, **dict(sorted(fields.items()))}


def key_matches(saved_key, view, older_data=False):
    """True when a cached result's key (``View.key`` when it was made) equals ``view``'s now. A
    key without a data version was made by version 1. With ``older_data``, a key that differs
    only by an older data pipeline matches too: the committed result of the last full run, shown
    with ``made_before``'s line until the run is made again."""
    saved, now = {"data_pipeline": 1, **saved_key}, view.key()
    if older_data and saved["data_pipeline"] < now["data_pipeline"]:
        saved = {**saved, "data_pipeline": now["data_pipeline"]}
    return saved == now
