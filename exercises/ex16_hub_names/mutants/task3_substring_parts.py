"""BERT's layer parts matched by substring ("output.dense" in the name) with the FFN's entries
tried first: "attention.output.dense" contains "output.dense" too, so the attention's output
projection and LayerNorm are named as the FFN's second matrix and LayerNorm (two names collide)."""
_reference_names = to_minishare
_BERT_PARTS = {"output.dense": "ffn.w2", "output.LayerNorm": "ffn.norm", "intermediate.dense": "ffn.w1",
               "attention.output.dense": "attn.o", "attention.output.LayerNorm": "attn.norm",
               "attention.self.query": "attn.q", "attention.self.key": "attn.k",
               "attention.self.value": "attn.v"}


def to_minishare(names):
    flat = _reference_names(names)                        # the other names, and the refusals
    for name in flat:
        m = BERT_LAYER.fullmatch(name)
        if m:
            hf = next(hf for hf in _BERT_PARTS if hf in m[2])
            flat[name] = f"enc.{int(m[1])}.{_BERT_PARTS[hf]}.{m[2].rpartition('.')[2]}"
    return flat
