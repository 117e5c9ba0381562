"""Experiment "tying": the MLM output layer tied to the word embeddings (BERT and ALBERT do it;
``tie_word_embeddings``, Hugging Face's field name) against an untied output layer, with plain
embeddings (E = H) and factorized ones (E < H), not-shared, over seeds: the parameters tying saves
(V × E, the output matrix) and the held-out loss at equal steps."""
from minishare.experiments import albert_arms, book_cells as cells, claims as ledger, stats
from minishare.experiments.common import tokenizer_vocab_size

NAME = "tying"
TITLE = "Tied against untied output layer"
ORDER = 70
READS = ("albert", "batch_size", "eval_every", "pretrain_corpus", "pretrain_lr", "pretrain_steps", "seq_len",
         "vocab_size")



def variants(settings):
    """name -> AlbertConfig fields that differ from settings.albert (not-shared throughout)."""
    H, E = settings.albert["hidden_size"], settings.albert["embedding_size"]
    return {f"plain E = H = {H}, tied": dict(embedding_size=H, tie_word_embeddings=True),
            f"plain E = H = {H}, untied": dict(embedding_size=H, tie_word_embeddings=False),
            f"factorized E = {E}, tied": dict(embedding_size=E, tie_word_embeddings=True),
            f"factorized E = {E}, untied": dict(embedding_size=E, tie_word_embeddings=False)}


def _config(config):
    """Tied is the preset's default: leave it out of the request, so the tied runs are the very
    runs the other experiments train."""
    return {k: v for k, v in config.items() if not (k == "tie_word_embeddings" and v)}


def requests(settings, out=None):
    return {name: request for config in variants(settings).values()
            for name, request in albert_arms.seed_requests(settings, "not-shared", **_config(config)).items()}


def run(out, settings, progress=True):
    result = {"V": tokenizer_vocab_size(settings.pretrain_corpus, settings.vocab_size), "N": settings.albert["num_hidden_layers"], "models": {}}
    for name, config in variants(settings).items():
        summary = albert_arms.summarize(albert_arms.seed_runs(out, settings, "not-shared", progress=progress,
                                                            **_config(config)))
        del summary["histories"]
        result["models"][name] = {"E": config["embedding_size"], "tied": config["tie_word_embeddings"], **summary}
    return result


def figures(result, folder):
    return []


def report(result, figs):
    n = next(iter(result["models"].values()))["final"]["eval_mlm_loss"]["n"]
    rows = [f"Not-shared, N = {result['N']}, Post-LN; mean ± standard deviation (min–max) over {n} seeds, at equal steps.", "",
            "| model | parameters | held-out MLM loss | MLM accuracy |", "|---|---|---|---|"]
    for name, r in result["models"].items():
        rows.append(f"| {name} | {r['params']:,} | {stats.fmt(r['final']['eval_mlm_loss'])} "
                    f"| {stats.fmt(r['final']['eval_mlm_accuracy'])} |")
    return "\n".join(rows)


def observations(result):
    notes, models = [], list(result["models"].items())
    for (tied_name, tied), (_, untied) in (models[0:2], models[2:4]):
        notes.append(f"{tied_name.rsplit(',', 1)[0]}: tying saves {untied['params'] - tied['params']:,} parameters "
                     f"(V × E = {result['V']} × {tied['E']} = {result['V'] * tied['E']:,}).")
    return notes


def claims(result, seeds):
    """Tied against untied held-out MLM loss, with plain and with factorized embeddings (primary)."""
    out, models = [], list(result["models"].items())
    for (tied_name, tied), (_, untied) in (models[0:2], models[2:4]):
        kind = tied_name.rsplit(",", 1)[0]
        out.append(ledger.compare(
            f"tying.{'plain' if kind.startswith('plain') else 'factorized'}", "tying",
            f"Held-out MLM loss, {kind}, tied against untied", "eval_mlm_loss", "lower", "tied", "untied",
            seeds, tied["final"]["eval_mlm_loss"]["values"], untied["final"]["eval_mlm_loss"]["values"],
            "tying lowers perplexity in language modelling (Press & Wolf, 2017)" if kind.startswith("plain")
            else None, True))
    return out


def baselines(result, settings):
    return albert_arms.no_model_baselines("tying", [m["final"] for m in result["models"].values()])


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def pair(kind):
        def f(r):
            models = cells.get(r, "models")
            tied = next(v for k, v in models.items() if k.startswith(kind) and v.get("tied"))
            untied = next(v for k, v in models.items() if k.startswith(kind) and not v.get("tied"))
            return tied, untied
        return f

    def params(kind):
        return lambda r: (f"{cells.get(pair(kind)(r)[0], 'params'):,} tied against {cells.get(pair(kind)(r)[1], 'params'):,} "
                          f"untied (saves {cells.get(pair(kind)(r)[1], 'params') - cells.get(pair(kind)(r)[0], 'params'):,})")

    def loss(kind):
        return lambda r: said(f"tying.{kind}")
    return [
        ("tying removes the output matrix", "saves V×H parameters (Press & Wolf, 2017)", params("plain")),
        ("tying usually lowers perplexity", "lower perplexity on language modelling (Press & Wolf, 2017)",
         loss("plain")),
        ("with a factorized embedding the V×E table is tied", "ALBERT's MLM head scores against the V×E table",
         params("factorized")),
        ("… and its effect on the loss", "not reported separately", loss("factorized")),
    ]
