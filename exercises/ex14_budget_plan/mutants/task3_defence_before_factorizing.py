"""ALBERT's factorized embedding (E = 8) added at the end, after the defence was written: with
V = 13 it saves nothing (the E × H projection costs more than it saves; 64,904 parameters), and
the defence still names the unfactorized count."""


def design(budget):
    return TransformerConfig(vocab_size=13, embedding_size=8, hidden_size=32, num_attention_heads=4,
                             intermediate_size=64, num_hidden_layers=6, sharing="cycle-rev", num_unique_layers=3)
