"""Eval mode without ``no_grad``: the numbers are right, but every forward records a graph that
holds every activation of the model until it is dropped, the memory cost of training for a
measurement."""


def model_transitions(model, input_ids, attention_mask=None):
    was_training = model.training
    model.eval()
    try:
        out = model(input_ids, attention_mask=attention_mask, output_hidden_states=True)
    finally:
        model.train(was_training)
    return layer_transitions([h.numpy() for h in out.hidden_states], attention_mask)
