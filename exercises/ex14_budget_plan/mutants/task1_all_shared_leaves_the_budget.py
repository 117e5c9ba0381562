"""All-shared, the plan that saves the most: one layer for six positions uses 21,920 parameters,
a third of the budget; the exercise asks to spend at least 90% of it (more width or more sets)."""


def design(budget):
    return TransformerConfig(vocab_size=13, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                             num_hidden_layers=6, sharing="all-shared")
