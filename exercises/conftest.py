"""Registers every task marker of ``points.json``, so ``pytest -m ex03_task2`` runs one task and
``--strict-markers`` (pytest.ini) turns a misspelt marker into an error instead of a silent skip."""
import json
import os


def pytest_configure(config):
    with open(os.path.join(os.path.dirname(__file__), "points.json"), encoding="utf-8") as f:
        table = json.load(f)
    for ex_id, entry in table.items():
        for name, task in entry["tasks"].items():
            config.addinivalue_line(
                "markers", f"{ex_id}_{name}: {entry['title']}: {task['title']} ({task['points']} points)")
