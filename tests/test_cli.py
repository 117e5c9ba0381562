"""The command line (``python -m minishare``), run in-process through ``minishare.cli.main``.

``count`` is checked against parameter counts worked out here from ALBERT's layer sizes (and the
paper's rounded Table 1 figures), ``plan`` against the paper's letters (Takase & Kiyono, Figure 1:
Cycle (rev), M = 3, N = 6 is A B C C B A); bad arguments must end with exit status 2 and one line
on stderr, never a traceback; ``train`` writes its files and ``train --resume`` continues.
"""
import csv
import json
import os
import subprocess
import sys

import pytest

from minishare import checkpoint, cli, data


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``python -m minishare *argv``."""
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit:                     # argparse: --help, or a malformed command line
        status = exit.code
    out, err = capsys.readouterr()
    return status, out, err


def albert_parameters(V=30000, E=128, H=768, layers=12, sets=1, P=512):
    """ALBERT's encoder with pooler: embeddings V·E + P·E + 2·E + LayerNorm 2E, projection E·H + H
    (none when E = H); per distinct layer attention 4(H² + H) + LayerNorm 2H and FFN with 4H inner
    units 2·4H·H + 4H + H + LayerNorm 2H; pooler H² + H."""
    embeddings = V * E + P * E + 2 * E + 2 * E + (E * H + H if E != H else 0)
    layer = 4 * (H * H + H) + 2 * H + (2 * 4 * H * H + 4 * H + H) + 2 * H
    return embeddings + sets * layer + H * H + H


# --- count ----------------------------------------------------------------------------------------
def test_count_prints_the_papers_tables(capsys):
    status, out, err = run(capsys, "count")
    assert status == 0 and err == ""
    albert_base = f"{albert_parameters():,}"
    assert albert_base == "11,683,584"
    row = next(line for line in out.splitlines() if "Table 1" in line and "albert-base" in line)
    assert albert_base in row and "12M" in row
    row = next(line for line in out.splitlines() if "Table 1" in line and "bert-base" in line
               and "albert" not in line)
    assert f"{albert_parameters(E=768, sets=12):,}" in row and "108M" in row
    for table in ("Table 1", "Table 3", "Table 4"):
        assert table in out
    assert "albert-tiny" in out                     # the presets follow


def test_count_one_preset_with_an_override(capsys):
    status, out, err = run(capsys, "count", "--preset", "albert-base", "-E", "256")
    assert status == 0 and err == ""
    assert f"{albert_parameters(E=256):,}" == "15,687,936"
    assert "15,687,936" in out


def test_count_not_shared_preset(capsys):
    status, out, _ = run(capsys, "count", "--preset", "albert-base", "--sharing", "not-shared")
    assert status == 0
    assert f"{albert_parameters(sets=12):,}" in out


# --- plan -----------------------------------------------------------------------------------------
def test_plan_prints_the_letters(capsys):
    status, out, err = run(capsys, "plan", "cycle-rev", "-N", "6", "-M", "3")
    assert status == 0 and err == ""
    assert "A B C C B A" in out


@pytest.mark.parametrize("argv, letters", [(["cycle", "-N", "6", "-M", "3"], "A B C A B C"),
                                           (["sequence", "-N", "6", "-M", "3"], "A A B B C C"),
                                           (["0,1,1,0"], "A B B A"),
                                           # M does not divide N: the paper's text, its code
                                           (["cycle-rev", "-N", "7", "-M", "3"], "A B C A B C C"),
                                           (["cycle-rev-code", "-N", "7", "-M", "3"],
                                            "A B C A C B A")])
def test_plan_other_schedules(argv, letters, capsys):
    status, out, _ = run(capsys, "plan", *argv)
    assert status == 0 and letters in out


def test_plan_draws_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "plan.png"
    status, out, err = run(capsys, "plan", "cycle-rev", "-N", "6", "-M", "3", "--draw", path)
    assert status == 0, err
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert str(path) in out


# --- bad arguments --------------------------------------------------------------------------------
def assert_one_line_error(status, err, *words):
    assert status == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error" in lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize("argv, words", [
    (["plan", "rotate", "-N", "6", "-M", "3"], ["rotate"]),
    (["plan", "cycle-rev", "-N", "3", "-M", "4"], ["n_unique", "4"]),
    (["plan", "sequence", "-N", "5", "-M", "2"], ["sequence", "divide"]),
    (["plan", "cycle"], ["n_layers"]),
    (["count", "--preset", "albert-gigantic"], ["albert-gigantic"]),
    (["count", "--preset", "albert-base", "-N", "0"], ["num_hidden_layers"]),
    (["count", "--preset", "albert-base", "-H", "100"], ["num_attention_heads"]),
])
def test_bad_values_give_one_line_and_status_2(argv, words, capsys):
    status, out, err = run(capsys, *argv)
    assert_one_line_error(status, err, *words)


def test_train_with_a_missing_corpus(tmp_path, capsys):
    missing = tmp_path / "no-such-corpus.txt"
    status, _, err = run(capsys, "train", "--corpus", missing, "--out", tmp_path / "run", "--no-progress")
    assert_one_line_error(status, err, str(missing))


def test_train_with_an_unknown_preset(tmp_path, capsys, text_corpus):
    status, _, err = run(capsys, "train", "--preset", "albert-gigantic", "--corpus", text_corpus,
                         "--vocab-size", 80, "--steps", 1, "--out", tmp_path / "run", "--no-progress")
    assert_one_line_error(status, err, "albert-gigantic")


def test_resume_without_a_checkpoint(tmp_path, capsys):
    out = tmp_path / "empty-run"
    status, _, err = run(capsys, "train", "--task", "copy", "--resume", "--out", out, "--no-progress")
    assert_one_line_error(status, err, str(out / "checkpoint.npz"))


def test_output_folder_that_cannot_be_made(tmp_path, capsys):
    """An operating-system error reads as its message and the path, not as its errno."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    status, _, err = run(capsys, "train", "--task", "copy", "--steps", 1, "--out", blocker / "run",
                         "--no-progress")
    assert_one_line_error(status, err, str(blocker))


def test_drawing_to_a_file_type_matplotlib_cannot_write(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    target = tmp_path / "plan.docx"
    status, _, err = run(capsys, "plan", "cycle", "-N", 4, "-M", 2, "--draw", target)
    assert_one_line_error(status, err, str(target), ".png")
    assert not target.exists()


def test_drawing_into_a_missing_folder(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    target = tmp_path / "missing" / "plan.png"
    status, _, err = run(capsys, "plan", "cycle", "-N", 4, "-M", 2, "--draw", target)
    assert_one_line_error(status, err, str(target))


@pytest.mark.parametrize("argv", [["train", "--task", "translate"], ["plan", "0,1,x"], ["frobnicate"],
                                  ["train", "--steps", "many"], []])
def test_malformed_command_lines_exit_2_without_traceback(argv, capsys):
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert "Traceback" not in err
    assert "error:" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("bug", [TypeError("unsupported operand type(s) for +: 'int' and 'NoneType'"),
                                 ValueError("operands could not be broadcast together")])
def test_a_bug_keeps_its_traceback(bug, capsys, monkeypatch):
    """A plain TypeError or ValueError from inside what a command calls is a bug, not a mistake of
    the user's: it leaves ``main`` (and so ends the process with its traceback) instead of
    becoming one line and status 2."""
    from minishare import sharing

    def broken(*args, **kwargs):
        raise bug
    monkeypatch.setattr(sharing.Plan, "build", broken)
    with pytest.raises(type(bug), match=str(bug)[:20]):
        cli.main(["plan", "cycle", "-N", "4", "-M", "2"])
    assert "error" not in capsys.readouterr().err


@pytest.mark.parametrize("command", [[], ["train"], ["count"], ["plan"], ["reproduce"]])
def test_help(command, capsys):
    status, out, err = run(capsys, *command, "--help")
    assert status == 0
    assert out.startswith("usage: python -m minishare")


@pytest.mark.parametrize("argv, names", [
    (["train", "--steps", "abc"], "--steps"), (["train", "--threads", "0"], "--threads"),
    (["train", "--frobnicate"], "--frobnicate"), (["frobnicate"], "frobnicate"), ([], "command"),
])
def test_a_malformed_command_line_is_one_line_naming_the_problem(argv, names, capsys):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and names in err and "--help" in err and "usage:" not in err, err


@pytest.mark.parametrize("flags, named", [(["-H", "0"], "--hidden-size"),
                                          (["--sharing", "cycle", "-M", "2"], "--sharing, --num-unique-layers")])
def test_count_refuses_a_configuration_flag_without_a_preset(flags, named, capsys):
    """The tables are fixed configurations: a flag that would change one was ignored silently."""
    status, out, err = run(capsys, "count", *flags)
    assert status == 2 and out == "" and "--preset" in err and named in err, err


def test_a_reader_that_leaves_early_is_not_an_error():
    """``count | head -1``: the pipe closes under the tables; the command ends with status 0 and
    says nothing (it said ``error: [Errno 32] Broken pipe``). Here stdout is a pipe whose reader
    has already gone, so the first write fails every time."""
    code = ("import os, sys\nread, write = os.pipe()\nos.close(read)\nos.dup2(write, 1)\n"
            "from minishare import cli\nsys.exit(cli.main(['count']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", (done.returncode, done.stderr)


# --- train ----------------------------------------------------------------------------------------
def train_args(out, corpus, steps, *extra):
    return ["train", "--corpus", corpus, "--vocab-size", 80, "--seq-len", 32, "--batch-size", 8,
            "-H", 32, "-N", 2, "--steps", steps, "--eval-every", 2, "--out", out, "--no-progress", *extra]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_train_writes_its_files_and_resume_continues(tmp_path, capsys, text_corpus):
    out = tmp_path / "run"
    status, stdout, err = run(capsys, *train_args(out, text_corpus, 3))
    assert status == 0, err
    assert sorted(os.listdir(out)) == ["checkpoint.npz", "config.json", "history.csv", "tokenizer.json"]
    final = json.loads(stdout[: stdout.rindex("}") + 1])
    assert final["step"] == 3 and "eval_sop_accuracy" in final

    rows = read_csv(out / "history.csv")
    assert [int(r["step"]) for r in rows] == [1, 2, 3]
    assert [bool(r["eval_mlm_loss"]) for r in rows] == [False, True, True]
    with open(out / "config.json") as f:
        settings = json.load(f)
    assert settings["steps"] == 3 and settings["task"] == "pretrain"
    assert settings["model"]["hidden_size"] == 32 and settings["model"]["num_hidden_layers"] == 2
    tokenizer = data.Tokenizer.load(str(out / "tokenizer.json"))
    assert tokenizer.vocab_size == settings["vocab_size"] <= 80
    model, state = checkpoint.load(str(out / "checkpoint.npz"), with_training_state=True)
    assert state["step"] == 3
    assert model.config.vocab_size == tokenizer.vocab_size and model.config.hidden_size == 32
    with open(out / "history.csv") as f:
        first_lines = f.read().splitlines()

    status, stdout, err = run(capsys, *train_args(out, text_corpus, 5, "--resume"))
    assert status == 0, err
    rows = read_csv(out / "history.csv")
    assert [int(r["step"]) for r in rows] == [1, 2, 3, 4, 5]
    with open(out / "history.csv") as f:
        lines = f.read().splitlines()
    assert lines[1:4] == first_lines[1:4]           # the first three steps are the saved ones
    _, state = checkpoint.load(str(out / "checkpoint.npz"), with_training_state=True)
    assert state["step"] == 5
    assert json.loads(stdout[: stdout.rindex("}") + 1])["step"] == 5
    assert sorted(os.listdir(out)) == ["checkpoint.npz", "config.json", "history.csv", "tokenizer.json"]


def test_train_uses_and_shows_the_defaults(tmp_path, capsys):
    """Flags not given take run_training's defaults, whose training-loop part is TrainConfig's: the
    values below, a warm-up of a tenth of the steps; --help shows the same values."""
    out = tmp_path / "run"
    status, _, err = run(capsys, "train", "--task", "copy", "-H", 16, "-N", 1, "--steps", 20, "--out", out,
                         "--no-progress")
    assert status == 0, err
    with open(out / "config.json") as f:
        arguments = json.load(f)["arguments"]
    assert {name: arguments[name] for name in ("lr", "optimizer", "warmup_steps", "batch_size", "eval_every",
                                               "save_every", "seed")} == \
        dict(lr=1e-3, optimizer="adamw", warmup_steps=2, batch_size=32, eval_every=100, save_every=50, seed=0)
    status, help_text, _ = run(capsys, "train", "--help")
    help_text = " ".join(help_text.split())                 # argparse wraps lines
    for default in ("(default 0.001)", "default 300;", "default 32", "default 100;", "(default 50)",
                    "default 64", "(default 1000)", "default albert-tiny", "default adamw",
                    "default runs/train"):
        assert default in help_text, default


@pytest.mark.parametrize("task", ["copy", "lm"])
def test_train_other_tasks(task, tmp_path, capsys, text_corpus):
    out = tmp_path / task
    data_flags = ["--corpus", text_corpus, "--vocab-size", 80] if task == "lm" else []   # copy makes its own
    status, _, err = run(capsys, "train", "--task", task, *data_flags, "--seq-len", 16, "--batch-size", 4,
                         "-H", 16, "-N", 1, "--steps", 2, "--eval-every", 2, "--out", out, "--no-progress")
    assert status == 0, err
    rows = read_csv(out / "history.csv")
    assert [int(r["step"]) for r in rows] == [1, 2]
    model = checkpoint.load(str(out / "checkpoint.npz"))
    assert type(model).__name__ == ("EncoderDecoderModel" if task == "copy" else "DecoderLM")
    assert ("eval_exact_match" if task == "copy" else "eval_perplexity") in rows[-1]
