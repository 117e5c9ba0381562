"""The grader's command line where minishare was installed without its checkout (``pip install .``:
the package in site-packages, no ``exercises/`` beside it) or without pytest: one line that names
what is missing and what to do, status 1, never a traceback."""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def installed_copy(tmp_path):
    """The package alone, as pip installs it: site/minishare, nothing else of the checkout."""
    site = tmp_path / "site"
    shutil.copytree(os.path.join(ROOT, "minishare"), site / "minishare",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site


def run(site, code, cwd):
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_release_outside_a_checkout_says_to_pass_the_exercises_folder(tmp_path):
    site = installed_copy(tmp_path)
    out = run(site, "import sys; from minishare.grader.__main__ import main; "
                    f"sys.exit(main(['release', '--out', {str(tmp_path / 'handout')!r}]))", tmp_path)
    assert out.returncode == 1, out
    assert "Traceback" not in out.stderr
    assert out.stderr.splitlines() == [
        f"error: no exercises at {site / 'exercises'}: pass --source <checkout>/exercises, the exercises "
        "folder of a minishare checkout"], out.stderr
    assert not (tmp_path / "handout").exists()


def test_release_with_the_exercises_folder_of_a_checkout_works_from_an_installed_copy(tmp_path):
    site = installed_copy(tmp_path)
    source = os.path.join(ROOT, "exercises")
    out = run(site, "import sys; from minishare.grader.__main__ import main; "
                    f"sys.exit(main(['--source', {source!r}, 'release', '--out', {str(tmp_path / 'handout')!r}, "
                    "'--only', 'ex01']))", tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "handout" / "points.json").is_file()


def test_release_without_pytest_names_the_missing_package(tmp_path):
    # None in sys.modules makes "import pytest" fail as it does where pytest is not installed
    out = run(ROOT, "import sys; sys.modules['pytest'] = None; from minishare.grader.__main__ import main; "
                    f"sys.exit(main(['release', '--out', {str(tmp_path / 'handout')!r}]))", tmp_path)
    assert out.returncode == 1, out
    assert out.stderr.splitlines() == [
        "error: the exercises' tools need the package 'pytest', which is not installed: pip install pytest"], out.stderr
