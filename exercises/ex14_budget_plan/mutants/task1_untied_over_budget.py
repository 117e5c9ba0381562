"""The output projection untied from the embedding (tie_word_embeddings=False), counted as if it
were free: the V × H matrix of the head (416 numbers here) takes the model to 65,088, over the
budget."""


def design(budget):
    return TransformerConfig(vocab_size=13, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                             num_hidden_layers=6, sharing="cycle-rev", num_unique_layers=3,
                             tie_word_embeddings=False)
