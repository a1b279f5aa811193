"""The compressors the engine lab loads are an input of every engine job (issue #33)."""

from __future__ import annotations

import json

from costlab.engine.extensions import compressors_loaded
from tests.workflow import external, planned, run_workflow

ENGINE_RULES = {"appversions_engine_version", "arraygrowth_engine", "docsize_engine"}


def test_what_is_loaded_names_each_library_and_its_digest_or_the_substitute(tmp_path):
    absent = compressors_loaded(str(tmp_path / "none"))
    assert absent == {
        "snappy": "absent: the nearest built-in compressor substitutes",
        "zstd": "absent: the nearest built-in compressor substitutes",
    }
    built = tmp_path / "built"
    built.mkdir()
    (built / "libwiredtiger_snappy.so").write_bytes(b"\x7fELF")
    (built / "manifest.json").write_text(
        json.dumps(
            {
                "built": {
                    "snappy": {
                        "library_version": "snappy 1.1.9",
                        "wt_header_version": "11.2.0",
                        "sha256": "ab" * 32,
                    }
                }
            }
        )
    )
    loaded = compressors_loaded(str(built))
    assert (
        loaded["snappy"]
        == f"libwiredtiger_snappy.so (snappy 1.1.9, WiredTiger 11.2.0 header, sha256 {'ab' * 32})"
    )
    assert loaded["zstd"] == absent["zstd"]
    (built / "manifest.json").write_text("{not json")  # a broken build is no build
    assert compressors_loaded(str(built)) == absent


def test_other_compressors_rerun_exactly_the_engine_jobs(smoke_all, server_uri, tmp_path, monkeypatch):
    # After `make wt-extensions` built snappy, `make all` had nothing to do: 13 appversions engine findings
    # kept "snappy not available here; lz4 measured". Here the other way round, on the finished smoke
    # tree: the same run on a machine whose extensions are absent.
    monkeypatch.setenv("COSTLAB_WT_EXTENSIONS", str(tmp_path / "no-extensions"))
    plan = planned(run_workflow(smoke_all.workdir, external(server_uri), ("-n", "all")))
    assert ENGINE_RULES <= set(plan), plan
    # what follows them (their merge, figures, findings, the report) and nothing else:
    # no model, no measurement
    assert not {
        rule
        for rule in plan
        if rule.endswith(("_model", "_load", "_measure", "_loadtest", "_run", "_events", "_correctness"))
    }, plan
    monkeypatch.delenv("COSTLAB_WT_EXTENSIONS")
    assert planned(run_workflow(smoke_all.workdir, external(server_uri), ("-n", "all"))) == {}
