import json

import pytest

from costlab.server import measuring_job
from costlab.server.provenance import redact_uri, server_kind

SECRET = "s3cr3t-P4ss"


@pytest.mark.parametrize("uri", [
    f"mongodb://alice:{SECRET}@db.example:27017/admin?authSource=admin",
    f"mongodb+srv://alice:{SECRET}@cluster0.example.net/?retryWrites=true",
    f"mongodb://alice:{SECRET}@h1:1,h2:2/?replicaSet=rs&tlsCertificateKeyFilePassword={SECRET}",
])
def test_redact_uri_drops_password_keeps_user_and_hosts(uri):
    redacted = redact_uri(uri)
    assert SECRET not in redacted
    assert "alice@" in redacted
    assert uri.split("@", 1)[1].split("/")[0] in redacted


def test_server_kind_detects_stand_in():
    assert server_kind({"process": "secantus"}) == "stand-in"
    assert server_kind({"process": "mongod"}) == "mongod"


def test_password_never_reaches_provenance_file(server_uri, tmp_path):
    # Put a password in the URI the job is configured with; the stand-in ignores credentials.
    host = server_uri.split("://", 1)[1].split("/")[0]
    uri = f"mongodb://alice:{SECRET}@{host}/?authSource=admin&authMechanism=PLAIN"
    plain = f"mongodb://{host}/"
    config = {"server": {"backend": "external", "uri": uri, "startup_timeout_s": 5}}
    out = tmp_path / "prov" / "job.json"
    # The stand-in does not authenticate; connect without credentials but record the configured URI.
    with measuring_job(
        {"server": {"backend": "external", "uri": plain, "startup_timeout_s": 5}}, "standalone", out
    ) as srv:
        srv.uri = redact_uri(uri)
        srv.client.admin.command("ping")
    text = out.read_text()
    record = json.loads(text)
    assert SECRET not in text
    assert record["server_kind"] in ("stand-in", "mongod")
    for key in ("version", "git_version", "storage_engine"):
        assert key in record["server"]
    for key in ("cpu_model", "cpu_cores_logical", "memory_bytes", "os"):
        assert record["host"][key]
    assert record["backend"] == "external" and record["profile"] == "standalone"
    assert record["applied_options"]["wiredTigerCacheSizeGB"] == "as configured by the deployment"
    assert record["started_at"] <= record["ended_at"]
    assert len(record["config_hash"]) == 16
    # And the config hash itself never hashes over the password-free URI differently per password.
    from costlab.config import config_hash
    other = {"server": {"backend": "external", "uri": uri.replace(SECRET, "other"), "startup_timeout_s": 5}}
    assert config_hash(config) == config_hash(other)


def test_provenance_not_written_when_the_job_fails(server_uri, tmp_path):
    out = tmp_path / "job.json"
    with pytest.raises(ValueError):
        with measuring_job({"server": {"backend": "external", "uri": server_uri}}, "standalone", out):
            raise ValueError("measurement failed")
    assert not out.exists()


def test_measuring_job_records_its_studys_hash(server_uri, tmp_path):
    from costlab.config import study_config_hash

    config = {"server": {"backend": "external", "uri": server_uri, "startup_timeout_s": 5},
              "docsize": {"window_minutes": 100}, "appversions": {"seed": 1}}
    out = tmp_path / "results" / "docsize" / "provenance" / "job.json"
    with measuring_job(config, "standalone", out):
        pass
    record = json.loads(out.read_text())
    assert record["study"] == "docsize"
    assert record["study_config_hash"] == study_config_hash(config, "docsize")
    assert record["study_config_hash"] == study_config_hash(config | {"appversions": {"seed": 2}}, "docsize")
