"""A name it does not know kept as it is instead of refused: the result looks complete, but a
tensor the flat layout has no place for (an lm_head, a new attention part) slips through under
a Hugging Face name, and whatever reads the flat names never learns it was there."""
_reference_names = to_minishare


def to_minishare(names):
    names = list(names)
    known = [n for n in names if not raises_alone(n)]
    flat = _reference_names(known)
    flat.update({n: n for n in names if n not in known})
    return flat


def raises_alone(name):
    try:
        _reference_names([name])
    except ValueError:
        return True
    return False
