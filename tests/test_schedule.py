"""The suite's schedule on xdist workers (tests/conftest.py): the smoke tree is built once, by one worker.

xdist hands each worker a first chunk of consecutive tests; every test that reads the smoke tree
must be in the first worker's chunk, or a second worker builds a second tree (minutes more).
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from workflow import ROOT

PLUGIN = '''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        starts = item.get_closest_marker("workflow") or {"server_uri", "snakemake_run"} & set(item.fixturenames)
        print("ORDER", "smoke" if "smoke_all" in item.fixturenames else "other",
              "starts" if starts else "-", item.nodeid)
'''  # noqa: E501 (code in a string, kept as it runs)


def collected_order(tmp_path, workers: int) -> list[tuple[str, str, str]]:
    (tmp_path / "order_plugin.py").write_text(PLUGIN)
    env = os.environ | {"PYTEST_XDIST_WORKER_COUNT": str(workers),
                        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "order_plugin",
                           "-p", "no:cacheprovider", "tests"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [tuple(line.split(" ", 3)[1:]) for line in proc.stdout.splitlines() if line.startswith("ORDER ")]


@pytest.mark.smoke   # the smoke tree's schedule: make test-smoke
def test_the_smoke_tests_come_first_and_fit_in_one_workers_first_chunk(tmp_path):
    order = collected_order(tmp_path, workers=3)
    kinds = [kind for kind, _, _ in order]
    smoke = kinds.count("smoke")
    assert smoke >= 10, "the smoke-tree tests were not found"
    assert kinds[:smoke] == ["smoke"] * smoke, "a smoke-tree test is not at the front"
    for workers in (2, 3):   # fewer workers have larger first chunks
        first_chunk = len(order) // workers // 4        # xdist's scheduler/load.py
        assert smoke <= first_chunk, (f"{smoke} tests read the smoke tree but a worker's first chunk is "
                                      f"{first_chunk} with {workers} workers: a second tree would be built")
    # tests that start a server or a workflow run early; the last quarter is light tests that
    # even out the end
    tail = [nodeid for _, starts, nodeid in order[len(order) * 3 // 4:] if starts == "starts"]
    assert tail == [], tail[:5]


def test_make_test_uses_workers_with_the_stand_in_and_one_process_against_a_real_server():
    def pytest_command(env: dict) -> str:
        proc = subprocess.run(
            ["make", "-n", "test"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        return next(line for line in proc.stdout.splitlines() if " -m pytest " in line)

    plain = {k: v for k, v in os.environ.items() if k not in ("COSTLAB_TEST_URI", "PYTEST_WORKERS")}
    assert " -m pytest -n 3" in pytest_command(plain)
    # one real server shared by workers would mix their databases: one process
    assert " -m pytest -n 0" in pytest_command(plain | {"COSTLAB_TEST_URI": "mongodb://127.0.0.1:27017/"})
