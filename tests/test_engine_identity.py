"""The compressors the engine lab loads are an input of every engine job (issue #33)."""

from __future__ import annotations

import json

from costlab.engine.extensions import compressors_loaded


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
