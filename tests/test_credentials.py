"""Credentials never reach disk or the console; the environment is the documented way to pass them.

The stand-in authenticates SCRAM users, so these tests use a real password against it.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_snakemake

from costlab.config import ConfigError, config_hash, load_config
from costlab.credentials import (
    ENV_PASSWORD,
    ENV_URI,
    connection_uri,
    public_server_config,
    redact_text,
    redact_uri,
    uri_problem,
)

SECRET = "Pw-9f3kQz7x"


def test_password_from_the_environment_is_put_into_the_uri_at_connect_time():
    uri = connection_uri({"uri": "mongodb://alice@db.example:27017/?authSource=admin"},
                         {ENV_PASSWORD: "p@ss/word"})
    assert uri == "mongodb://alice:p%40ss%2Fword@db.example:27017/?authSource=admin"
    # COSTLAB_MONGODB_URI replaces server.uri; a URI with its own password is left alone.
    assert connection_uri({"uri": "mongodb://a@x/"}, {ENV_URI: "mongodb://b@y/", ENV_PASSWORD: "z"}) == \
        "mongodb://b:z@y/"
    assert connection_uri({"uri": "mongodb://a:own@x/"}, {ENV_PASSWORD: "z"}) == "mongodb://a:own@x/"
    with pytest.raises(ValueError, match="names no user"):
        connection_uri({"uri": "mongodb://x/"}, {ENV_PASSWORD: "z"})


def test_public_server_config_and_redact_text_hide_the_password():
    server = {"backend": "external", "uri": f"mongodb://alice:{SECRET}@h:1/?authSource=admin"}
    public = public_server_config(server)
    assert SECRET not in repr(public) and public["uri"] == redact_uri(server["uri"])
    assert server["uri"].count(SECRET) == 1  # the original is not modified
    assert redact_text(f"auth failed for {server['uri']}", server, {}) .count(SECRET) == 0
    assert SECRET not in redact_text(f"x {SECRET} y", {"uri": "mongodb://a@h/"}, {ENV_PASSWORD: SECRET})


@pytest.mark.parametrize("uri, problem", [
    ("localhost:27017", "must start with mongodb://"),
    ("http://db.example/", "must start with mongodb://"),
    ("mongodb://", "names no host"),
    (f"mongodb://alice:{SECRET}@/db", "names no host"),
    ("mongodb://h1:99999/", "invalid port"),
    ("mongodb+srv://a.example:27017/", "mongodb+srv://"),
])
def test_a_uri_that_is_not_a_connection_string_is_rejected_without_its_password(uri, problem):
    assert problem in uri_problem(uri)
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"server": {"backend": "external", "uri": uri}})
    assert "server.uri" in str(err.value) and problem in str(err.value)
    assert SECRET not in str(err.value)


@pytest.mark.parametrize("uri", ["mongodb://h:27017/", "mongodb://a@h1,h2:27018/?replicaSet=rs",
                                 "mongodb+srv://cluster0.example.net/", "mongodb://[::1]:27017/"])
def test_connection_strings_pass(uri):
    assert uri_problem(uri) is None


def test_external_without_uri_is_accepted_when_the_environment_has_one(monkeypatch):
    monkeypatch.setenv(ENV_URI, "mongodb://alice@db.example/")
    assert load_config(overrides={"server": {"backend": "external"}})["server"]["uri"] is None


def test_config_hash_ignores_the_password():
    a = {"server": {"uri": f"mongodb://alice:{SECRET}@h/"}}
    b = {"server": {"uri": "mongodb://alice:other@h/"}}
    assert config_hash(a) == config_hash(b)


def _all_text_under(path: Path) -> str:
    chunks = []
    for file in path.rglob("*"):
        if file.is_file() and ".cache" not in file.parts:
            chunks.append(file.read_bytes().decode(errors="replace"))
    return "\n".join(chunks)


ARRAYGROWTH_JOB = ["results/arraygrowth/provenance/standalone_insert.json"]


@pytest.mark.workflow   # a Snakemake run: make test-workflow
def test_password_in_the_environment_runs_a_job_and_reaches_no_file_or_console(
    auth_server, tmp_path, monkeypatch
):
    # The documented way: the URI names the user, the environment holds the password.
    monkeypatch.setenv(ENV_PASSWORD, SECRET)
    result = run_snakemake(tmp_path, ARRAYGROWTH_JOB, f"mongodb://alice@{auth_server}/?authSource=admin")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / ARRAYGROWTH_JOB[0]).exists()
    assert SECRET not in result.stdout + result.stderr
    assert SECRET not in _all_text_under(tmp_path)   # results, logs and .snakemake/


@pytest.mark.workflow   # a Snakemake run: make test-workflow
def test_password_given_with_config_stays_out_of_snakemake_metadata(auth_server, tmp_path):
    # Not the documented way, but a password in server.uri still must not be written by costlab
    # or recorded by Snakemake as a rule parameter.
    result = run_snakemake(tmp_path, ARRAYGROWTH_JOB, f"mongodb://alice:{SECRET}@{auth_server}/?authSource=admin")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / ".snakemake" / "metadata").is_dir()
    # Snakemake itself records its command line (the log's "Command:" header): that is why the
    # documented way is the environment. Nothing else may hold the password.
    leaks = [line for line in _all_text_under(tmp_path).splitlines()
             if SECRET in line and not line.strip().startswith("Command:")]
    assert leaks == []
    assert ENV_PASSWORD in result.stderr   # costlab says where the password belongs


def test_precheck_pings_an_external_uri_and_names_it_without_password(tmp_path):
    import portpicker

    port = portpicker.pick_unused_port()   # nothing listens there
    config = tmp_path / "external.yaml"
    config.write_text(f"server: {{backend: external, uri: 'mongodb://alice:{SECRET}@127.0.0.1:{port}/'}}\n")
    result = subprocess.run([sys.executable, "-m", "costlab.server.check", "--configfile", str(config)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert f"mongodb://alice@127.0.0.1:{port}/" in result.stderr and "did not answer ping" in result.stderr
    assert SECRET not in result.stdout + result.stderr


def test_precheck_accepts_an_external_server_that_answers(server_uri, tmp_path):
    config = tmp_path / "external.yaml"
    config.write_text(f"server: {{backend: external, uri: '{server_uri}'}}\n")
    result = subprocess.run([sys.executable, "-m", "costlab.server.check", "--configfile", str(config)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# Functions that hand a rule the server section (or what it decides) without credentials.
REDACTING_CALLS = ("public_server_config(", "_server_identity(")


def test_the_redacting_calls_leave_no_password():
    from costlab.server.availability import server_identity

    server = {"backend": "external", "uri": f"mongodb://alice:{SECRET}@h:1/?authSource=admin"}
    assert SECRET not in repr(public_server_config(server))
    assert SECRET not in repr(server_identity(server, "external", "standalone"))


def test_no_rule_passes_the_raw_server_section_as_a_parameter():
    # Snakemake stores params in .snakemake/metadata: a server section there must be redacted.
    import re

    from costlab.config import ROOT

    offenders = []
    for path in sorted((ROOT / "rules").glob("*.smk")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if re.search(r"""config(\[["']server["']\]|\.get\(["']server["'])""", line) \
                    and not any(f in line for f in REDACTING_CALLS) and "=" in line.split("#")[0] \
                    and re.match(r"\s+\w+\s*=", line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == [], (
        "wrap the server section in costlab.credentials.public_server_config: " + "; ".join(offenders)
    )
