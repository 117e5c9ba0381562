"""The alternative is Vanilla at the same depth (N = 6, unshared): the natural "what does sharing
cost" comparison, but at twice the parameters (128,800) it is not a design of the same budget."""


def alternatives(budget):
    return {"vanilla N=6": TransformerConfig(vocab_size=13, hidden_size=32, num_attention_heads=4,
                                             intermediate_size=64, num_hidden_layers=6)}
