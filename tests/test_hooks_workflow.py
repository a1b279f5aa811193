"""The workflow's hooks, through Snakemake itself (issue #43): onstart sweeps what a killed job left,
onsuccess prints the summary, and onerror after a measuring job's failed rerun dates the kept outputs
older than their inputs (the next run plans the job again) and rebuilds the page to say what it shows.

The onerror hook used to import a function that does not exist (rebuild_after_failed_run): every failed
run ended in an ImportError, and the next `snakemake all` said "Nothing to be done"."""
from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.workflow

CONFIG = """\
studies: [flatnested]
engine: {enabled: false}
server: {operation_timeout_s: 2}
flatnested: {documents: 200, flat_fields: [10], runs: 3, warmup_runs: 1}
"""


def test_a_failed_rerun_goes_through_onerror_and_the_next_run_measures_again(tmp_path):
    from workflow import external, planned, run_workflow, standin

    (tmp_path / "lab.yaml").write_text(CONFIG)
    (tmp_path / "more_runs.yaml").write_text("flatnested: {runs: 4}\n")
    raw_dir = tmp_path / "results/flatnested/raw"
    page = tmp_path / "results/report.html"
    with standin() as uri:
        server = external(uri)
        first = run_workflow(tmp_path, server, ("all",), configfiles=("config/smoke.yaml", "lab.yaml"),
                             hide_local_servers=False)
        assert first.returncode == 0, first.stderr[-4000:]
        assert "costlab summary" in first.stderr          # onsuccess
        assert page.exists()
    kept = {path.name: path.read_bytes() for path in raw_dir.glob("*.parquet")}
    assert sorted(kept) == ["flat_10.parquet", "structured_2x5.parquet"]
    # what a job killed by kill -9 leaves: a temporary file whose owner (pid 2**22 + 1) is gone
    leftover = tmp_path / "results/flatnested/tables/.comparison.csv.4194305.1.abcdefgh.tmp"
    leftover.write_text("partial")
    # the server is gone (stopped above): the rerun asked for by runs: 4 fails
    second = run_workflow(tmp_path, server, ("all",),
                          configfiles=("config/smoke.yaml", "lab.yaml", "more_runs.yaml"),
                          hide_local_servers=False)
    assert second.returncode != 0
    text = second.stdout + second.stderr
    assert "Error in rule flatnested_measure" in text, text[-4000:]
    assert "ImportError" not in text and "cannot import name" not in text, text[-4000:]   # onerror ran
    assert "costlab summary" not in second.stderr                                         # not onsuccess
    assert not leftover.exists()                                                          # onstart swept it
    # the measuring job that failed (Snakemake starts no other after it) recorded itself; its last good
    # measurement is back (Snakemake) and dated before its inputs (onerror)
    failed = [p.name.removesuffix(".json") for p in (raw_dir.parent / ".rerun_failed").glob("*.json")]
    assert len(failed) == 1 and failed[0] in kept, failed
    raw = raw_dir / failed[0]
    assert raw.read_bytes() == kept[failed[0]]
    assert raw.stat().st_mtime == 1
    assert "last rerun of flatnested_measure failed" in page.read_text()   # the page says what it shows
    # the next run plans the failed measurement again (Snakemake recorded its params as if it had run: it
    # used to say "Nothing to be done")
    again = run_workflow(tmp_path, server, ("-n", "all"),
                         configfiles=("config/smoke.yaml", "lab.yaml", "more_runs.yaml"),
                         hide_local_servers=False)
    assert planned(again)["flatnested_measure"] >= 1
    assert f"results/flatnested/raw/{failed[0]}" in again.stdout, again.stdout[-3000:]
    assert os.path.exists(raw)
