"""Sizes are checked before any work, each refusal naming its limit (issue 34): a run's batch,
sequence, vocabulary and steps, BLAS threads, layerwise's batch, and a resumed run's tokenizer
file. Each huge value runs under a 2 GiB address-space limit, so an allocation would fail loudly."""
import json
import subprocess
import sys

import pytest

from test_hostile_runs import COPY, LM, env
from test_run_workflow import one_line, run


def bounded(argv, tmp_path, parser=False):
    """(status, the one line of stderr) of the command line under the address-space limit; an
    argparse refusal (``parser``) prints its usage first, then the line."""
    code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            "from minishare import cli\n"
            f"sys.exit(cli.main({[str(a) for a in argv]!r}))")
    done = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True, timeout=300)
    return done.returncode, done.stderr.strip().splitlines()[-1] if parser else one_line(done.stderr)


@pytest.mark.parametrize("flag, value, limit", [
    ("--batch-size", 10**9, "65,536"), ("--steps", 10**12, "10,000,000"), ("--seq-len", 10**9, "65,536"),
    ("--batch-size", 4096, "4,194,304"),          # with --seq-len 4096: 16,777,216 tokens a step
])
def test_a_run_size_past_its_ceiling_is_refused_naming_the_limit(flag, value, limit, tmp_path):
    extra = ["--seq-len", 4096] if value == 4096 else []
    status, line = bounded([*COPY, flag, value, *extra, "--out", tmp_path / "run"], tmp_path)
    assert status == 2 and flag in line and limit in line and "out of memory" not in line, line
    assert not (tmp_path / "run").exists()


def test_a_huge_vocabulary_is_refused_naming_the_limit(tmp_path):
    status, line = bounded([*LM, "--vocab-size", 10**9, "--steps", 1, "--out", tmp_path / "run"], tmp_path)
    assert status == 2 and "--vocab-size" in line and "262,144" in line, line


@pytest.mark.parametrize("argv", [["train", "--threads", "1000000000"],
                                  ["layerwise", "--pretrained", "x", "--batch-size", "1000000000"]])
def test_threads_and_the_layerwise_batch_are_refused_by_the_parser(argv, tmp_path):
    status, line = bounded(argv, tmp_path, parser=True)
    assert status == 2 and "at most" in line and "Traceback" not in line, line


def test_a_resumed_tokenizer_file_larger_than_its_vocabulary_allows_is_refused_before_reading(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *LM, "--steps", 1, "--out", out)[0] == 0
    nested = json.dumps({"format": "minishare-bpe", "version": 1, "vocab": [[[["x"] * 8] * 8] * 8] * 4000,
                         "merges": []})
    (out / "tokenizer.json").write_text(nested)
    status, line = bounded([*LM, "--steps", 2, "--out", out, "--resume"], tmp_path)
    assert status == 2 and "tokenizer.json" in line and "a tokenizer of 60 pieces" in line, line
