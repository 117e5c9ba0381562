"""The budget spent on the unshared model of that size (Vanilla, N = 3): it uses 99.5% of the
budget, but the exercise is to spend it on a plan that shares, more positions than sets."""


def design(budget):
    return TransformerConfig(vocab_size=13, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                             num_hidden_layers=3)
