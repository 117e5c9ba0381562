"""Exercise 10: how much each layer changes its input, ALBERT's Figure 1 (Lan et al., 2019,
Sec. 3.1): "the L2 distances and cosine similarity (in terms of degree) of the input and output
embedding of each layer".

Definition used here (the paper gives none): for layer l with input h_l and output h_{l+1}, per
token t, distance = ‖h_{l+1}(t) − h_l(t)‖₂ and angle = the angle between the two vectors in
degrees; a layer's value is the mean over every non-padding token of every example.

The library's ``minishare/analysis/layerwise.py`` holds an answer: please do not look at it until
you are done (the grader does not let a submission use it). Work with NumPy arrays.
"""
import numpy as np


def token_transitions(h_in, h_out):
    """Task 1. h_in, h_out (B, T, H) -> (distance (B, T), angle in degrees (B, T)), in float64
    whatever the inputs' dtype. The angle must be accurate at both ends, for nearly parallel and
    for nearly opposite vectors (the tests ask for θ and for 180° − θ to a relative 1e-6):
    arccos of the cosine loses half the digits near 0° (cos θ ≈ 1 − θ²/2, so a 1e-7 rad
    angle comes out wrong), and the chord formula of chapter 9, 2·arcsin(‖û − v̂‖ / 2), loses them
    near 180° in the same way (arcsin is flat at 1). Find a formula accurate everywhere (hint: û − v̂
    and û + v̂ are orthogonal)."""
    ### BEGIN SOLUTION task 1
    a, b = np.asarray(h_in, dtype=np.float64), np.asarray(h_out, dtype=np.float64)   # (B, T, H)
    distance = np.sqrt(((b - a) ** 2).sum(axis=-1))                              # (B, T)
    u = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-300)        # unit vectors
    v = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-300)
    # ‖û − v̂‖ = 2 sin(θ/2) and ‖û + v̂‖ = 2 cos(θ/2): each is accurate where the other is small,
    # and atan2 of the two is accurate for every θ in [0, π] (Kahan's formula).
    half = np.arctan2(np.linalg.norm(u - v, axis=-1), np.linalg.norm(u + v, axis=-1))   # (B, T)
    return distance, np.degrees(2 * half)
    ### END SOLUTION


def layer_transitions(hidden_states, attention_mask=None):
    """Task 2. ``hidden_states``: the N + 1 arrays (B, T, H) between layers (the embedding output
    first), ``attention_mask`` (B, T) of 1/0 or None (all real). Returns
    {"l2": [N floats], "degrees": [N floats]}, the means over non-padding tokens."""
    ### BEGIN SOLUTION task 2
    first = np.asarray(hidden_states[0])
    keep = np.ones(first.shape[:2]) if attention_mask is None else np.asarray(attention_mask, dtype=np.float64)
    if keep.sum() == 0:
        raise ValueError("no non-padding token to average over")
    l2, degrees = [], []
    for h_in, h_out in zip(hidden_states[:-1], hidden_states[1:]):
        distance, angle = token_transitions(h_in, h_out)
        l2.append(float((distance * keep).sum() / keep.sum()))
        degrees.append(float((angle * keep).sum() / keep.sum()))
    return {"l2": l2, "degrees": degrees}
    ### END SOLUTION


def model_transitions(model, input_ids, attention_mask=None):
    """Task 3. Figure 1 for an ``AlbertModel``: run it in eval mode without recording a graph
    (``minishare.no_grad()``), with ``output_hidden_states=True``, and apply
    ``layer_transitions`` to its hidden states. Restore the model's training mode afterwards."""
    ### BEGIN SOLUTION task 3
    import minishare
    was_training = model.training
    model.eval()
    try:
        with minishare.no_grad():
            out = model(input_ids, attention_mask=attention_mask, output_hidden_states=True)
    finally:
        model.train(was_training)
    return layer_transitions([h.numpy() for h in out.hidden_states], attention_mask)
    ### END SOLUTION
