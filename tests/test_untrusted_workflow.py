"""Files of yours through Snakemake itself (issue #43): a sample edited with its modification time kept is
measured again (its content is the input, not its mtime) and a touch is not; a config file with a key given
twice and a layout file that exits at import stop `snakemake` before any job, in one line."""
from __future__ import annotations

import json
import os
import shutil

import pytest

pytestmark = pytest.mark.workflow

TARGET = "results/docsize/engine/documents/cache_reads_ticket.csv"
LAB = """\
studies: [docsize]
docsize:
  documents:
    ticket: {sample: mine.json, projected: [openedAt, priority, subject]}
"""


def _run(workdir, *args, configfiles=("config/smoke.yaml", "lab.yaml")):
    from workflow import run_workflow

    return run_workflow(workdir, "{backend: none}", args, configfiles=configfiles)


def test_a_sample_edited_with_its_mtime_kept_is_measured_again(tmp_path):
    from workflow import planned

    from costlab.config import ROOT

    sample = tmp_path / "mine.json"
    shutil.copy(ROOT / "config" / "documents" / "ticket.json", sample)
    (tmp_path / "lab.yaml").write_text(LAB)
    first = _run(tmp_path, TARGET)
    assert first.returncode == 0, first.stderr[-3000:]
    os.utime(sample)                                    # a touch: the same content
    assert planned(_run(tmp_path, "-n", TARGET))["docsize_document_engine"] == 0
    # an edit that keeps the modification time (cp -p, rsync -t, a checkout): used to be "Nothing to be done"
    stat = sample.stat()
    document = json.loads(sample.read_text())
    document["subject"] = "another " + str(document["subject"])
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    os.utime(edited, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    shutil.copy2(edited, sample)
    assert sample.stat().st_mtime_ns == stat.st_mtime_ns
    assert planned(_run(tmp_path, "-n", TARGET))["docsize_document_engine"] == 1


def test_a_key_given_twice_stops_snakemake_before_any_job(tmp_path):
    (tmp_path / "lab.yaml").write_text("flatnested:\n  runs: 3\n  runs: 4\n")
    proc = _run(tmp_path, "-n", "all")
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "lab.yaml: key 'runs' is given twice (lines 2 and 3)" in text, text[-3000:]
    assert not (tmp_path / "results").exists()


def test_a_layout_file_that_exits_at_import_stops_snakemake_in_one_line(tmp_path):
    (tmp_path / "mine.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "lab.yaml").write_text("appversions:\n  versions: [appV4, mine]\n  variants:\n"
                                       "    mine: {layout_file: mine.py, bucket: day, report: match_group}\n")
    proc = _run(tmp_path, "-n", "all")
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert ("costlab: invalid config key appversions.variants.mine.layout_file: importing mine.py failed: "
            "SystemExit: 0\n" in text), text[-3000:]
    assert "Traceback" not in text
