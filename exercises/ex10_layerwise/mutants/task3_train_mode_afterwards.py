"""Switching back with ``model.train()`` after measuring, instead of restoring the mode it had: a
model that was in eval mode comes back in training mode (dropout on in the next evaluation)."""
import minishare


def model_transitions(model, input_ids, attention_mask=None):
    model.eval()
    with minishare.no_grad():
        out = model(input_ids, attention_mask=attention_mask, output_hidden_states=True)
    model.train()
    return layer_transitions([h.numpy() for h in out.hidden_states], attention_mask)
