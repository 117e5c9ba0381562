"""Training runs with a cache: each run lives in ``OUT/runs/<name>/`` (checkpoint, history,
settings), and an identical request later loads it instead of training again. Experiments that
need the same run (the layer-wise figure and the convergence curves both use the trained
not-shared and all-shared ALBERTs) therefore train it once."""
import csv
import json
import os

from minishare import checkpoint
from minishare.experiments.common import run_training


def cached_run(out, name, progress=True, **request):
    """``run_training(**request)`` into ``out/runs/name``, or its cached result when the same
    request finished before. Returns {"model", "history", "final"}."""
    folder = os.path.join(out, "runs", name)
    marker = os.path.join(folder, "request.json")
    wanted = json.dumps(request, sort_keys=True, default=str)
    if os.path.exists(marker) and open(marker).read() == wanted:
        return {"model": checkpoint.load(os.path.join(folder, "checkpoint.npz")),
                "history": read_history(os.path.join(folder, "history.csv")),
                "final": json.load(open(os.path.join(folder, "final.json")))}
    result = run_training(out=folder, progress=progress, **request)
    with open(os.path.join(folder, "final.json"), "w") as f:
        json.dump(result["final"], f, indent=1)
    with open(marker, "w") as f:      # written last: a crashed run is never taken as finished
        f.write(wanted)
    return result


def read_history(path):
    """history.csv -> list of dicts of floats (empty cells dropped)."""
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]
