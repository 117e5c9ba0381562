"""Named configurations: ALBERT's Table 1 (Lan et al., 2019) and tiny ones that train in minutes
on a laptop CPU. Heads are H/64 and the FFN is 4H, as in the paper; V = 30,000.

The tiny presets have a placeholder V: training sets ``vocab_size`` from the tokenizer.
"""
_BERT = dict(vocab_size=30000, hidden_act="gelu", sharing="not-shared",
             hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
_ALBERT = dict(vocab_size=30000, embedding_size=128, hidden_act="gelu_new", sharing="all-shared")


def _size(H, L):
    return dict(hidden_size=H, num_hidden_layers=L, num_attention_heads=H // 64, intermediate_size=4 * H)


PRESETS = {
    "bert-base": {**_BERT, **_size(768, 12), "embedding_size": 768},
    "bert-large": {**_BERT, **_size(1024, 24), "embedding_size": 1024},
    "albert-base": {**_ALBERT, **_size(768, 12)},
    "albert-large": {**_ALBERT, **_size(1024, 24)},
    "albert-xlarge": {**_ALBERT, **_size(2048, 24)},
    "albert-xxlarge": {**_ALBERT, **_size(4096, 12)},
    # Tiny models for the course: H = 128, 4 layers, 2 heads of 64; ALBERT with E = 32.
    "bert-tiny": {**_BERT, "hidden_size": 128, "embedding_size": 128, "num_hidden_layers": 4,
                  "num_attention_heads": 2, "intermediate_size": 512, "max_position_embeddings": 128,
                  "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "vocab_size": 2000},
    "albert-tiny": {**_ALBERT, "hidden_size": 128, "embedding_size": 32, "num_hidden_layers": 4,
                    "num_attention_heads": 2, "intermediate_size": 512, "max_position_embeddings": 128,
                    "vocab_size": 2000},
}

# Table 1 of the ALBERT paper: parameters as printed (rounded).
PAPER_TABLE1 = {"bert-base": "108M", "bert-large": "334M", "albert-base": "12M",
                "albert-large": "18M", "albert-xlarge": "60M", "albert-xxlarge": "235M"}
