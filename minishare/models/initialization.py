"""How the models start: BERT's initialization, a policy of the model (the primitives it uses,
``trunc_normal_``, ``zeros_``, ``ones_``, live in ``minishare.nn.init``)."""
from minishare.nn import init
from minishare.nn.layers import Embedding, LayerNorm, Linear


def bert_init_(module, std=0.02):
    """BERT's initialization for a whole model: every Linear and Embedding weight from a normal
    truncated at ±2 std, biases 0, LayerNorm weight 1 and bias 0 (Devlin et al., 2019; ALBERT's
    reference code does the same). A module reached twice (shared) is initialized once."""
    for m in module.modules():
        if isinstance(m, (Linear, Embedding)):
            init.trunc_normal_(m.weight, std=std, a=-2 * std, b=2 * std)
        if isinstance(m, Linear) and m.bias is not None:
            init.zeros_(m.bias)
        if isinstance(m, LayerNorm):
            init.ones_(m.weight)
            init.zeros_(m.bias)
    return module
