"""One target that needs a server, asked for on a machine with none: a few lines, before any job runs.

`snakemake all` with no server builds the server-free parts (tests/test_servers_workflow.py); a
mongod figure named on its own cannot be built at all, and used to fail in its server setup jobs
with ~34 lines of Snakemake exceptions (RuleException, CalledProcessError, WorkflowError).
"""
from __future__ import annotations

import pytest
from workflow import NO_SERVER, workflow

from costlab.server.availability import require_server, what_auto_tried
from costlab.server.errors import NO_SERVER_FIX, NoServerForTarget

TARGET = "results/docsize/figures/bytes_read.png"


def console_lines(proc) -> list[str]:
    # Snakemake's dry-run header (SNAKEMAKE / Date / Config MD5 ...) is kept for a plan: judge what follows it
    text = proc.stdout + proc.stderr
    text = text.split("Building DAG of jobs...", 1)[-1]
    return [line for line in text.splitlines() if line.strip() and not line.startswith("Using ")]


# the run: a Snakemake run (make test-workflow); the plan stops the same way in make test
@pytest.mark.parametrize("dry_run", [pytest.param(False, id="run", marks=pytest.mark.workflow),
                                     pytest.param(True, id="dry-run")])
def test_a_server_target_with_no_server_stops_in_a_few_lines(tmp_path, dry_run):
    proc = workflow(tmp_path, NO_SERVER, *(["-n"] if dry_run else []), TARGET)
    lines = console_lines(proc)
    text = "\n".join(lines)
    assert proc.returncode != 0
    assert len(lines) <= 4, text
    assert f"{TARGET} needs a MongoDB server" in text
    assert "no Docker engine answering at unix:///nonexistent/docker.sock and no mongod on PATH" in text
    assert NO_SERVER_FIX in text
    assert "Exception" not in text and "Traceback" not in text and "Error in rule" not in text, text
    # planning stopped before any job: no server setup log, nothing half-written
    assert not (tmp_path / "results").exists()


def test_require_server_with_a_server_adds_no_input():
    assert require_server("docker", {"backend": "auto"}, {TARGET}, "standalone") == []
    assert (
        require_server("external", {"backend": "external", "uri": "mongodb://h/"}, set(), "replset-1") == []
    )


def test_require_server_with_none_names_the_targets_what_was_tried_and_the_fix(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nowhere.sock")
    with pytest.raises(NoServerForTarget) as err:
        require_server(None, {"backend": "auto"}, {"all", TARGET}, "standalone")
    message = str(err.value)
    assert message.startswith(f"costlab: {TARGET} needs a MongoDB server (server profile standalone)")
    assert "all" not in message.split("needs")[0].replace(TARGET, "")  # `all` is never the culprit
    assert "unix:///nowhere.sock" in message and NO_SERVER_FIX in message
    assert len(message.splitlines()) == 3

    with pytest.raises(NoServerForTarget) as err:
        require_server(None, {"backend": "none"}, {"b.png", "a.csv"}, "replset-1")
    assert "some of a.csv, b.png need a MongoDB server" in str(err.value)
    assert what_auto_tried({"backend": "none"}) in str(err.value)
