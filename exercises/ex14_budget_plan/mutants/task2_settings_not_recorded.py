"""measure that writes the results but not the settings that produced them (batch size and
TrainConfig): the losses are there, but nobody, the grader included, can train the runs again."""
_measure = measure


def measure(designs, seeds=(0, 1), steps=80, batch_size=16, lr=3e-3):
    result = _measure(designs, seeds, steps, batch_size, lr)
    del result["batch_size"], result["train"]
    return result
