"""Messages that say what happened (issue #33): compared tables, the rerun hint, a full engine workdir,
cleanup's arguments, refused credentials, a dead lease holder, the rebuild command."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import polars as pl
import pytest

from costlab.config import ROOT, load_config, run_arguments, study_config_hash

SECRET = "Pw-33kQz7x"


# ---- a broken compared table is named with its file and what is wrong ----


def test_a_broken_engine_or_model_verdict_table_of_a_compared_tree_is_named(tmp_path):
    from costlab.report.compare import load_runs, notes
    from tests.test_compare_runs import ROWS_A, make_tree

    this = make_tree(tmp_path / "a", "8.0.4", "host-a", ROWS_A)
    other = make_tree(tmp_path / "b", "8.0.4", "host-b", ROWS_A)
    (other / "flatnested" / "engine").mkdir()
    (other / "flatnested" / "engine" / "published_vs_engine.csv").write_text("garbage\x01,\nnot a table\n")
    (other / "flatnested" / "model").mkdir()
    pl.DataFrame(
        {
            "finding": ["f"],
            "metric": ["m"],
            "unit": [""],
            "published": [1.0],
            "reproduced": [1.0],
            "outcome": ["reproduced"],
        }
    ).write_csv(other / "flatnested" / "model" / "published_vs_model.csv")
    said = notes("flatnested", load_runs(this, [other]))
    engine = [n for n in said if "published_vs_engine.csv" in n]
    model = [n for n in said if "published_vs_model.csv" in n]
    # they used to show "—" and "invalid (see the notes above)" with no note at all
    assert len(engine) == 1 and "lacks column(s) finding, metric" in engine[0], said
    assert len(model) == 1 and "lacks column(s) verdict" in model[0], said


# ---- the rerun hint agrees with the plan ----


def test_fewer_sizes_keep_the_study_hash_and_another_scale_changes_it():
    # `sizes_kb: [1]` kept every 1 KB job (snakemake -n: nothing to do) but the page said "rerun the study"
    base = load_config()
    fewer = load_config(overrides={"docsize": {"sizes_kb": [1]}})
    other = load_config(overrides={"docsize": {"docs_per_collection": 4000}})
    assert study_config_hash(fewer, "docsize") == study_config_hash(base, "docsize")
    assert study_config_hash(other, "docsize") != study_config_hash(base, "docsize")
    fewer_versions = load_config(overrides={"appversions": {"versions": ["appV1"]}})
    assert study_config_hash(fewer_versions, "appversions") == study_config_hash(base, "appversions")


# ---- a full engine workdir: one line ----


def test_a_full_engine_workdir_is_disk_full_writing_the_home(tmp_path, monkeypatch):
    from costlab import io
    from costlab.engine.runs import engine_home
    from costlab.io import DiskFull

    monkeypatch.setattr(io.shutil, "disk_usage", lambda path: type("u", (), {"free": 4096})())
    with pytest.raises(DiskFull) as err:
        with engine_home(tmp_path, "docsize-64k") as home:
            raise RuntimeError("WT_PANIC: WiredTiger library panic")  # what a panic on a full disk raises
    message = str(err.value)
    assert message.startswith(f"costlab: disk full writing {home} (WiredTiger: WT_PANIC")
    assert not home.exists()


def test_a_costlab_error_is_one_line_on_the_console_and_the_traceback_is_in_the_log(tmp_path):
    log = tmp_path / "logs" / "docsize_engine.log"
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(f"""
        from snakemake.iocontainers import Namedlist as N, Snakemake
        snakemake = Snakemake(N(), N(), N(), N(), 1, N(), N([{str(log)!r}]), {{}}, "docsize_engine", 0)
        from costlab.io import DiskFull
        raise DiskFull("costlab: disk full writing /scratch/costlab-engine-docsize-64k-1.2-x "
                       "(WiredTiger: WT_PANIC)")
    """)
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "costlab: disk full writing /scratch/costlab-engine-docsize-64k-1.2-x (WiredTiger: WT_PANIC) "
        f"(details: {log})"
    ]
    assert "Traceback" in log.read_text()


def test_an_engine_lab_failure_is_one_console_line_with_the_fix(tmp_path):
    log = tmp_path / "logs" / "appversions_engine_version.log"
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(f"""
        from snakemake.iocontainers import Namedlist as N, Snakemake
        snakemake = Snakemake(N(), N(), N(), N(), 1, N(), N([{str(log)!r}]), {{}},
                              "appversions_engine_version", 0)
        from costlab.engine.update import apply_update
        apply_update({{}}, {{"$bit": {{"a": {{"and": 1}}}}}})
    """)
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "costlab: job appversions_engine_version failed: NotImplementedInEngine: update operator $bit is "
        "not implemented in the engine lab; the fix: use the operators docs/engine-lab.md lists in your "
        "layout, or leave the version out of the engine lab; `make dryrun` checks a layout before any job "
        f"(traceback: {log})"
    ]
    assert "Traceback" in log.read_text() and "apply_update" in log.read_text()


# ---- cleanup takes make all's config arguments, never prints a password ----


def test_cleanup_takes_config_keys_and_never_prints_the_password():
    server = (
        "server={backend: external, uri: 'mongodb://alice:"
        + SECRET
        + "@127.0.0.1:9/', operation_timeout_s: 1}"
    )
    done = subprocess.run(
        [sys.executable, "-m", "costlab.server.cleanup", "--config", server, "--dry-run"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 2
    # it used to read --config as --configfile:
    # "config file server={uri: 'mongodb://alice:<password>@…'} does not exist"
    assert "config file" not in said and SECRET not in said
    assert "costlab: the external server mongodb://alice@127.0.0.1:9/ did not answer ping within 1 s" in said


# ---- refused credentials say so (a real mongod with authorization on: tests/conftest.py auth_server) ----


def test_a_wrong_password_is_an_authentication_failure_not_a_silent_server(auth_server, monkeypatch):
    from costlab.server.check import ping_external
    from costlab.server.errors import ServerUnavailable

    monkeypatch.setenv("COSTLAB_MONGODB_PASSWORD", "not-" + SECRET)
    with pytest.raises(ServerUnavailable) as err:
        ping_external({"backend": "external", "uri": f"mongodb://alice@{auth_server}/?authSource=admin"})
    message = str(err.value)
    # it used to say "did not answer ping within 5 s"
    assert (
        f"the external server mongodb://alice@{auth_server}/?authSource=admin refused the credentials: "
        "authentication failed" in message
    )
    assert "did not answer" not in message and SECRET not in message


# ---- a dead holder on this host: its lease is taken over ----


def test_a_lease_of_a_dead_process_on_this_host_is_taken_over(test_db):
    import socket

    from costlab.server.lease import LEASE_COLLECTION, LeaseHeld, document_lease, holder_record

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    later = datetime.now(timezone.utc) + timedelta(seconds=60)
    orphan = {
        "job": "appversions_loadtest_appV4",
        "host": socket.gethostname(),
        "pid": int(dead.stdout),
        "cwd": "/w",
        "since": "2026-12-02T10:00:00+00:00",
    }
    test_db[LEASE_COLLECTION].insert_one(
        {"_id": "appV4", "token": "t1", "holder": orphan, "expires_at": later}
    )
    # after kill -9 of Snakemake, --unlock and a rerun: the dead pid used to be named as "being measured"
    with document_lease(test_db, "appV4", "appversions_loadtest_appV4") as record:
        assert record["took_over_from"]["pid"] == orphan["pid"]
        assert test_db[LEASE_COLLECTION].find_one({"_id": "appV4"})["holder"]["pid"] == os.getpid()
    alive = holder_record("appversions_loadtest_appV5R0")  # this very process: alive, so still refused
    test_db[LEASE_COLLECTION].insert_one(
        {"_id": "appV5R0", "token": "t2", "holder": alive, "expires_at": later}
    )
    with pytest.raises(
        LeaseHeld, match=f"being measured by job appversions_loadtest_appV5R0 \\(pid {os.getpid()}"
    ):
        with document_lease(test_db, "appV5R0", "another"):
            pass
    away = {**orphan, "host": "another-host"}  # another host's pid cannot be checked
    test_db[LEASE_COLLECTION].insert_one(
        {"_id": "appV6R0", "token": "t3", "holder": away, "expires_at": later}
    )
    with pytest.raises(LeaseHeld):
        with document_lease(test_db, "appV6R0", "another"):
            pass


# ---- the rebuild command carries the run's config arguments ----


def test_the_rebuild_command_carries_the_runs_config_arguments(monkeypatch):
    from costlab.inputs import rebuild_command

    args = run_arguments(
        [ROOT / "config" / "config.yaml", "config/smoke.yaml", "my lab.yaml"],
        {
            "docsize": {"sizes_kb": [1, 64]},
            "server": "{backend: external, uri: 'mongodb://alice:" + SECRET + "@db:27017/'}",
        },
    )
    assert args == (
        "--configfile config/smoke.yaml 'my lab.yaml' --config 'docsize={sizes_kb: [1, 64]}' "
        "'server={backend: external, uri: '\"'\"'mongodb://alice:***@db:27017/'\"'\"'}'"
    )
    monkeypatch.setenv("COSTLAB_RUN_ARGS", args)
    assert (
        rebuild_command("results/docsize/model/collections.csv")
        == f"snakemake --force results/docsize/model/collections.csv {args}"
    )
    assert rebuild_command("resources/published/x.csv") == "git checkout -- resources/published/x.csv"
