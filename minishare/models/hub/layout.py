"""Which minishare models Hugging Face's layouts can hold, and the schedule they run.

Sharing. Hugging Face's ALBERT shares whole layers (attention and FFN together) in consecutive
groups: position i of N runs group int(i / (N / G)), G = ``num_hidden_groups``, and each group runs
its ``inner_group_num`` = K layers in turn, so layer k of group g is distinct set g · K + k and the
model has N · K layer positions. All-shared (G = 1), not-shared (G = N) and Takase & Kiyono's
Sequence (G = M dividing N) have K = 1. Cycle with M dividing N is one group of K = M layers run
N / M times (A B A B: G = 1, K = 2, Hugging Face's num_hidden_layers = 2); its hidden states there
are the N / M + 1 states between groups, the function is the same. Cycle (rev) (A B B A) returns to
a set in an order no group repeats, Cycle with M not dividing N ends with a partial round, and
shared-attention and shared-FFN share one component and not the other: the layout holds none of
them, and saving one is refused with the reason. A folder with K > 1 loads as N · K positions
under an explicit schedule.

BERT's layout gives every layer its own parameters and embeds tokens in H directly (E = H, no
E -> H projection). Both layouts are Post-LN, without the Universal Transformer's timestep signal.
"""
from minishare.errors import MinishareError
from minishare.sharing import label

MODEL_TYPES = ("albert", "bert")


class HubError(MinishareError, ValueError):
    """A folder or a model that cannot go through the Hugging Face layout; the message says why."""


def albert_groups(config):
    """(N, G, K): Hugging Face's ``num_hidden_layers``, ``num_hidden_groups`` and
    ``inner_group_num`` that express ``config``'s encoder, or HubError saying why none do."""
    _check_post_ln(config, "ALBERT")
    plan = config.plan()
    attention, ffn = plan.schedule("attention"), plan.schedule("ffn")
    if attention != ffn:
        raise HubError(f"Hugging Face's ALBERT shares whole layers, attention and FFN together; the plan "
                       f"{plan.name} shares them apart (attention {_letters(attention)}, FFN "
                       f"{_letters(ffn)}), which its layout cannot hold")
    L = len(attention)
    for K in (k for k in range(1, L + 1) if L % k == 0):
        N, n_sets = L // K, plan.n_sets("attention")
        if n_sets % K == 0 and hf_schedule(N, n_sets // K, K) == attention:
            return N, n_sets // K, K
    raise HubError(f"Hugging Face's ALBERT shares whole layers in consecutive groups of N/G positions "
                   f"(position i uses group int(i / (N/G)), G = num_hidden_groups); the plan {plan.name} "
                   f"({_letters(attention)}) {_why_not_groups(attention)}, which no num_hidden_groups "
                   "expresses")


def bert_refusal(config):
    """Why ``config`` is not a BERT (E = H, no projection, each layer its own parameters, Post-LN),
    or None when it is one."""
    try:
        _check_post_ln(config, "BERT")
    except HubError as error:
        return str(error)
    plan = config.plan()
    if config.embedding_size != config.hidden_size:
        return (f"BERT embeds tokens in H directly (E = H); this model has E = {config.embedding_size}, "
                f"H = {config.hidden_size}: save it as model_type='albert'")
    if config.has_embedding_projection:
        return ("BERT has no E -> H projection, and this model has one (embedding_projection=True): "
                "save it as model_type='albert'")
    own = tuple(range(plan.n_layers))
    if plan.schedule("attention") != own or plan.schedule("ffn") != own:
        return (f"BERT gives every layer its own parameters; the plan {plan.name} shares them "
                f"({plan}): save it as model_type='albert' if it shares in consecutive groups")
    return None


def _check_post_ln(config, name):
    if config.norm_position != "post":
        raise HubError(f"Hugging Face's {name} is Post-LN (LayerNorm after each residual sum); this model "
                       f"is norm_position={config.norm_position!r}, a different function")
    if config.timestep_signal:
        raise HubError(f"Hugging Face's {name} has no place for the Universal Transformer's timestep "
                       "signal that this model adds before every layer")


def hf_schedule(N, G, K):
    """The set each of the N · K layers uses in Hugging Face's ALBERT (AlbertTransformer.forward:
    group int(i / (N / G)) at position i, then that group's K inner layers in turn)."""
    return tuple(int(i / (N / G)) * K + k for i in range(N) for k in range(K))


def _letters(schedule):
    return " ".join(label(s) for s in schedule)


def _why_not_groups(schedule):
    """The first place a schedule leaves consecutive equal groups."""
    for i in range(1, len(schedule)):
        if schedule[i] != schedule[i - 1] and schedule[i] in schedule[:i]:
            return f"returns to set {label(schedule[i])} at position {i} after other sets"
    sizes = [schedule.count(s) for s in range(max(schedule) + 1)]
    return f"has groups of sizes {', '.join(map(str, sizes))}, where Hugging Face's groups are equal"
