"""The FFN narrowed to 60 after the defence was written (and after curve.json was measured): the
design is still valid (63,112 parameters), but the defence names the count of the model it no
longer is."""


def design(budget):
    return TransformerConfig(vocab_size=13, hidden_size=32, num_attention_heads=4, intermediate_size=60,
                             num_hidden_layers=6, sharing="cycle-rev", num_unique_layers=3)
