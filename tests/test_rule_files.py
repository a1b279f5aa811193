"""The rule files declare: rules say what depends on what, the planning is in the package (Study.targets).

Counted here so it cannot creep back: the Python outside rule and checkpoint blocks in rules/*.smk and the
Snakefile (non-blank, non-comment lines), and rules defined under a condition.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from costlab.config import ROOT

# Half of the 262 lines issue 44 counted before the rule files read their names from Study.targets.
TOP_LEVEL_LIMIT = 131
BLOCK_START = re.compile(r"(rule|checkpoint)\s+\w+\s*:")


def workflow_files() -> list[Path]:
    return [*sorted((ROOT / "rules").glob("*.smk")), ROOT / "Snakefile"]


def top_level_lines(text: str) -> list[str]:
    """The non-blank, non-comment lines outside rule and checkpoint blocks (a block: its header at the
    margin and every indented or blank line after it)."""
    found, inside = [], False
    for line in text.splitlines():
        if BLOCK_START.match(line):
            inside = True
            continue
        if inside and (not line.strip() or line[0] in " \t"):
            continue
        inside = False
        if line.strip() and not line.strip().startswith("#"):
            found.append(line)
    return found


def test_the_counter_counts_what_it_says():
    text = (
        '# a comment\nX = 1\n\nrule a:\n    input:\n        "x",\n\n    # inside\n    output: "y"\n'
        'Y = [\n    1,\n]\ncheckpoint b:\n    run:\n        pass\nonstart:\n    go()\n'
    )
    assert top_level_lines(text) == ["X = 1", "Y = [", "    1,", "]", "onstart:", "    go()"]


def test_the_rule_files_hold_little_top_level_python():
    counts = {path.name: len(top_level_lines(path.read_text())) for path in workflow_files()}
    assert sum(counts.values()) <= TOP_LEVEL_LIMIT, (
        f"{sum(counts.values())} top-level lines in the rule files ({counts}); at most {TOP_LEVEL_LIMIT}: "
        "derive names in the study's Study.targets (costlab/<study>/targets.py), not in its rules file"
    )


def test_no_rule_is_defined_under_a_condition():
    # every rule is always defined; the targets decide whether its outputs are wanted
    for path in workflow_files():
        text = path.read_text()
        assert not re.search(r"^[ \t]+(rule|checkpoint)\s+\w+\s*:", text, re.MULTILINE), path.name
        assert not re.search(r"^if\b", text, re.MULTILINE), path.name


def test_no_rules_file_registers_targets_itself():
    # what `all` builds comes from Study.targets alone
    for path in workflow_files():
        assert not re.search(r"\b(add_targets|add_server_free_targets|ALL_TARGETS)\b", path.read_text()), (
            path.name
        )


class _SocketWatch:
    """A Unix socket where `auto` would find a Docker engine: it records each connection and answers none."""

    def __init__(self, path: Path) -> None:
        import socket
        import threading

        self.path, self.connections = path, 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            client.close()

    def close(self) -> None:
        self._server.close()


@pytest.mark.workflow
def test_the_server_is_probed_only_for_a_target_that_needs_to_know(tmp_path, monkeypatch):
    """`auto` asks a Docker engine first: a model's target plans without asking; `all` asks, once."""
    from workflow import run_workflow

    watch = _SocketWatch(tmp_path / "docker.sock")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{watch.path}")
    try:
        model = run_workflow(tmp_path, "{backend: auto}", ("-n", "results/docsize/model/collections.csv"),
                             hide_local_servers=False)
        assert model.returncode == 0, model.stderr[-3000:]
        assert watch.connections == 0
        everything = run_workflow(tmp_path, "{backend: auto}", ("-n", "all"), hide_local_servers=False)
        assert everything.returncode == 0, everything.stderr[-3000:]
        assert watch.connections == 1   # the probe saw the socket (else the first check proves nothing)
    finally:
        watch.close()
