"""The library's own errors (``minishare.errors``): each error it raises on purpose is a
``MinishareError`` that keeps its builtin kind, and the checks of what a user gives raise one; the
command line tells them from bugs by that (``tests/test_cli.py``)."""
import pytest

import minishare
from minishare import checkpoint, checks, data, errors, safeio, sharing
from minishare.grader.catalog import CatalogError
from minishare.grader.regions import RegionError
from minishare.run import errors as run_errors, folder as run_folder
from minishare.models import AlbertConfig, TransformerConfig
from minishare.nn import MultiHeadAttention
from minishare.train import TrainConfig


@pytest.mark.parametrize("error, builtin", [
    (errors.InvalidValue, ValueError), (errors.InvalidType, TypeError), (errors.MissingPackage, ImportError),
    (run_errors.BadArgument, ValueError), (run_errors.RunInUse, FileExistsError),
    (run_errors.TrainingDiverged, FloatingPointError), (run_errors.TrainingInterrupted, Exception),
    (checkpoint.CheckpointError, ValueError), (minishare.GradcheckError, AssertionError),
    (minishare.backend.BackendError, ImportError), (RegionError, ValueError), (CatalogError, ValueError),
])
def test_library_errors_keep_their_builtin_kind(error, builtin):
    assert issubclass(error, errors.MinishareError) and issubclass(error, builtin)


@pytest.mark.parametrize("call, kind", [
    (lambda: checks.check_int(True, "n_layers"), errors.InvalidType),
    (lambda: safeio.integer(0, "vocab_size"), errors.InvalidValue),
    (lambda: sharing.Plan.build("rotate", 6), errors.InvalidValue),
    (lambda: sharing.Plan.build("cycle", 6, 2.0), errors.InvalidType),
    (lambda: AlbertConfig(hidden_size=100), errors.InvalidValue),            # 12 heads do not divide it
    (lambda: AlbertConfig.from_preset("albert-gigantic"), errors.InvalidValue),
    (lambda: TransformerConfig(sharing="cycle", num_unique_layers=9), errors.InvalidValue),
    (lambda: TransformerConfig(hidden_act="swish"), errors.InvalidValue),
    (lambda: MultiHeadAttention(8, 3), errors.InvalidValue),
    (lambda: TrainConfig(optimizer="sgd"), errors.InvalidValue),
    (lambda: data.Tokenizer.train(["abc"], vocab_size=3), errors.InvalidValue),
    (lambda: data.Tokenizer.train(["abc"], vocab_size=True), errors.InvalidType),
    (lambda: minishare.set_num_threads(0), errors.InvalidValue),
    (lambda: run_folder.check_arguments(dict(vocab_size=1000, seq_len=64, steps=0, batch_size=32,
                                             eval_every=1, save_every=1, seed=0, lr=1e-3, warmup_steps=0)),
     run_errors.BadArgument),
])
def test_checks_of_user_input_raise_library_errors(call, kind):
    with pytest.raises(kind):
        call()


def test_unreadable_corpus_is_a_library_error(tmp_path):
    (tmp_path / "notes.md").write_text("no .txt here")
    with pytest.raises(errors.InvalidValue, match="no .txt file"):
        data.load_text(str(tmp_path))
