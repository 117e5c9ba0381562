"""The mask used for the means but not passed to the model: the padding positions take part in
attention and change the real tokens' states, so the means are over the wrong states."""
import minishare


def model_transitions(model, input_ids, attention_mask=None):
    was_training = model.training
    model.eval()
    try:
        with minishare.no_grad():
            out = model(input_ids, output_hidden_states=True)
    finally:
        model.train(was_training)
    return layer_transitions([h.numpy() for h in out.hidden_states], attention_mask)
