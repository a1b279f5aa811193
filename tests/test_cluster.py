"""What jobs ask a cluster for (costlab/cluster.py), the Slurm profile, and the shared-filesystem check."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from costlab import cluster
from costlab.cluster import (
    MEASURING_RULES,
    SUBMIT_MARK,
    TOKEN_ENV,
    SharedFilesystemError,
    check_submit_host_visible,
    job_ask,
    mark_submit_host,
    measuring_job_counts,
    node_hours,
)
from costlab.config import ROOT, load_config


@pytest.fixture(scope="module")
def smoke():
    return load_config(ROOT / "config" / "smoke.yaml")


@pytest.fixture(scope="module")
def full():
    return load_config(ROOT / "config" / "full.yaml")


def test_measuring_jobs_ask_for_a_whole_node_and_server_free_jobs_do_not(smoke):
    for rule in MEASURING_RULES:
        resources = job_ask(rule, smoke).resources
        assert resources["slurm_extra"] == "--exclusive", rule
        assert resources["cpus_per_task"] == job_ask(rule, smoke).threads + cluster.SERVER_THREADS
    for rule in ("appversions_events", "appversions_model", "docsize_tables", "report"):
        resources = job_ask(rule, smoke).resources
        assert "slurm_extra" not in resources and "cpus_per_task" not in resources
        assert job_ask(rule, smoke).threads == 1


def test_load_test_time_limit_covers_its_schedule_and_grows_with_it(smoke, full):
    lt = full["appversions"]["loadtest"]
    schedule_s = lt["warmup_seconds"] + lt["phase_seconds"] * len(lt["upsert_rates"])  # 300 + 4 x 3000
    assert schedule_s == 12300
    full_ask = job_ask("appversions_loadtest", full)
    assert full_ask.runtime * 60 >= schedule_s * cluster.SAFETY
    assert full_ask.runtime > job_ask("appversions_loadtest", smoke).runtime
    # its client runs every upsert and report worker at once: 20 + 20 published
    assert full_ask.threads == lt["upsert_workers"] + lt["report_workers"] == 40


def test_time_limits_and_memory_scale_with_the_config(smoke, full):
    for rule in ("appversions_load", "docsize_measure", "arraygrowth_run"):
        assert job_ask(rule, full).runtime > job_ask(rule, smoke).runtime, rule
    # 500 M events (50 M a year, 10 years) at the assumed 10,000 events/s: 50,000 s of work
    assert job_ask("appversions_load", full).expected_s == pytest.approx(50_000 + cluster.JOB_OVERHEAD_S)
    # the correctness check still holds every event: its memory follows events_per_year
    assert (
        job_ask("appversions_correctness", full).mem_mb > 5 * job_ask("appversions_correctness", smoke).mem_mb
    )


def test_streamed_event_steps_ask_from_their_measurements(smoke, full):
    for rule, stream in cluster.MEASURED_STREAMS.items():
        assert stream.peak_mb > 0 and stream.cpu_s_per_million > 0, rule
        # memory does not grow with the events: the same ask at 6,000 and at 500 M events, above the peak
        assert (
            job_ask(rule, full).mem_mb
            == job_ask(rule, smoke).mem_mb
            >= stream.peak_mb * cluster.STREAM_MEMORY_SAFETY
        )
        # time is linear in the events: 500 M events x the measured CPU seconds per million, + 60 s
        assert job_ask(rule, full).expected_s == pytest.approx(500 * stream.cpu_s_per_million + 60)
        assert job_ask(rule, full).runtime >= job_ask(rule, full).expected_s * cluster.SAFETY / 60


def test_runtime_is_whole_five_minutes_with_a_floor():
    ask = cluster.JobAsk("x", threads=1, cpus=1, mem_mb=1, expected_s=601, exclusive=False)
    assert ask.runtime == 25          # 601 s x 2 = 20.03 min -> 25
    tiny = cluster.JobAsk("x", threads=1, cpus=1, mem_mb=1, expected_s=1, exclusive=False)
    assert tiny.runtime == cluster.MIN_RUNTIME_MIN


def test_jobs_on_one_external_deployment_take_turns(smoke):
    assert job_ask("docsize_measure", smoke).resources["external_server"] == 0
    external = smoke | {"server": smoke["server"] | {"backend": "external", "uri": "mongodb://h:1/"}}
    assert job_ask("docsize_measure", external).resources["external_server"] == 1
    assert "external_server" not in job_ask("docsize_model", external).resources


def test_slurm_profile_caps_no_mongod_but_an_external_deployment():
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    caps = dict(item.split("=") for item in profile["resources"])
    assert caps == {"external_server": "1"}
    default = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())
    assert "mongod=1" in default["resources"]


def test_the_plugin_is_pinned_outside_the_base_requirements():
    base = (ROOT / "requirements.txt").read_text()
    slurm = (ROOT / "requirements-slurm.txt").read_text()
    assert "slurm" not in base
    assert re.search(r"^snakemake-executor-plugin-slurm==\d", slurm, re.MULTILINE)


def test_job_counts_match_the_workflow_plan(smoke, smoke_plan):
    # `snakemake -n all` on the smoke config with a configured server (a dry run connects to nothing: without
    # one no measuring job is planned), in an empty scratch tree: the session's plan (tests/conftest.py).
    result = smoke_plan
    assert result.returncode == 0, result.stderr[-2000:]
    planned = {
        m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", result.stdout, re.MULTILINE)
    }
    counts = measuring_job_counts(smoke)
    assert counts == {rule: n for rule, n in planned.items() if rule in MEASURING_RULES}


def test_node_hours_are_jobs_times_hours(full):
    hours = node_hours(full)
    loadtest = next(r for r in hours.rows if r["rule"] == "appversions_loadtest")
    # one job per version full.yaml load-tests (config/full.yaml: every version, as published), one repeat
    tested = len(full["appversions"]["loadtest"]["versions"])
    assert loadtest["jobs"] == tested
    assert loadtest["expected_node_h"] == pytest.approx(
        tested * job_ask("appversions_loadtest", full).expected_s / 3600
    )
    assert hours.expected == pytest.approx(sum(r["expected_node_h"] for r in hours.rows))
    assert hours.limit > hours.expected


def test_a_job_that_sees_the_submitters_mark_passes(tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    token = mark_submit_host(tmp_path)
    assert os.environ[TOKEN_ENV] == token
    check_submit_host_visible(tmp_path)  # no error


def test_a_job_that_cannot_see_the_mark_names_it(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "abc")
    with pytest.raises(SharedFilesystemError) as err:
        check_submit_host_visible(tmp_path)
    assert str(tmp_path / SUBMIT_MARK) in str(err.value)
    assert "docs/slurm.md" in str(err.value)


def test_a_job_that_sees_another_runs_mark_says_so(tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    mark_submit_host(tmp_path)
    monkeypatch.setenv(TOKEN_ENV, "a-token-of-another-run")
    with pytest.raises(SharedFilesystemError, match="another run"):
        check_submit_host_visible(tmp_path)


def test_without_a_token_nothing_is_checked(tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    check_submit_host_visible(tmp_path)  # a job not submitted by a marking Snakemake


def test_a_remote_job_of_the_workflow_stops_before_its_inputs(tmp_path):
    """What a job on another node runs (snakemake --mode remote): without the mark it fails naming it."""
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = os.environ | {TOKEN_ENV: "the-submitters-token", "XDG_CACHE_HOME": str(tmp_path / ".cache")}
    result = subprocess.run([sys.executable, "-m", "snakemake", "--mode", "remote", "--cores", "1",
                             "--configfile", "config/smoke.yaml", "--target-jobs", "uniqueidx_conformance:"],
                            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode != 0
    assert "SharedFilesystemError" in result.stdout + result.stderr
    assert "results/.costlab-submit.json" in result.stdout + result.stderr


def test_the_engine_labs_cache_is_in_its_memory_ask(smoke):
    bigger = smoke | {
        "engine": smoke["engine"] | {"docsize": smoke["engine"]["docsize"] | {"default_cache_mb": 8192}}
    }
    assert job_ask("docsize_engine", bigger).mem_mb == cluster.SERVER_FREE_MB + 8192
    assert "slurm_extra" not in job_ask("docsize_engine", bigger).resources


def _rule_blocks() -> dict[str, str]:
    blocks: dict[str, str] = {}
    for path in sorted((ROOT / "rules").glob("*.smk")):
        parts = re.split(r"^rule (\w+):\n", path.read_text(), flags=re.MULTILINE)
        blocks |= {name: body.split("\n\n\n")[0] for name, body in zip(parts[1::2], parts[2::2])}
    return blocks


def test_every_rule_that_takes_the_mongod_resource_asks_for_a_whole_node():
    """A measuring rule added later cannot silently share a node: it must be in MEASURING_RULES."""
    blocks = _rule_blocks()
    takes_mongod = {name for name, body in blocks.items() if re.search(r"^\s+mongod=", body, re.MULTILINE)}
    assert takes_mongod == set(MEASURING_RULES)


def test_rules_ask_for_their_own_name():
    for name, body in _rule_blocks().items():
        asked = set(re.findall(r'ask\("(\w+)"\)', body))
        assert asked <= {name}, f"rule {name} asks for {asked}"
        if name in MEASURING_RULES:
            assert asked == {name}, f"measuring rule {name} declares no ask"


def test_the_server_matrix_passes_the_slurm_profile_to_every_image(smoke, tmp_path):
    from costlab.matrix import plan

    config = smoke | {"matrix": {"images": ["mongo:7.0", "mongo:8.0"]}}
    args = [
        "--profile",
        "profiles/slurm",
        "--default-resources",
        "slurm_partition=p",
        "mem_mb=2000",
        "runtime=15",
    ]
    runs = plan(config, args, tmp_path)
    assert len({run.workdir for run in runs}) == 2  # each image its own results/ (and submit mark)
    for run in runs:
        joined = " ".join(run.command)
        assert joined.count("--profile") == 1 and "--profile profiles/slurm" in joined
        assert "--default-resources slurm_partition=p mem_mb=2000 runtime=15" in joined


def test_the_authors_driver_asks_for_a_node_covering_its_idle_period_and_is_counted(full):
    """Its jobs hold a server like the scheduled load test's, plus the authors' idle period after each
    version."""
    lt = full["appversions"]["loadtest"]
    authors = job_ask("appversions_loadtest_authors", full)
    scheduled = job_ask("appversions_loadtest", full)
    assert authors.exclusive and authors.threads == scheduled.threads
    assert authors.expected_s == pytest.approx(scheduled.expected_s + float(lt.get("idle_seconds") or 0))
    without = {**full, "appversions": {**full["appversions"], "loadtest": {**lt, "authors_driver": False}}}
    with_authors = {
        **full,
        "appversions": {**full["appversions"], "loadtest": {**lt, "authors_driver": True}},
    }
    assert "appversions_loadtest_authors" not in measuring_job_counts(without)
    assert (measuring_job_counts(with_authors)["appversions_loadtest_authors"]
            == measuring_job_counts(with_authors)["appversions_loadtest"])


def test_a_timed_job_has_this_machine_to_itself_and_an_untimed_one_shares_it(smoke):
    # docsize's and flatnested's query times and the load test are wall-clock times: on one machine of
    # 2 cores each asks for both (no engine-lab job beside its timing); the loads and the counters ask for
    # their client's processes (1 here) and share the machine.
    for rule in ("docsize_measure", "flatnested_measure", "appversions_loadtest"):
        assert job_ask(rule, smoke, local_cores=2).threads >= 2, rule
    assert job_ask("docsize_measure", smoke, local_cores=2).threads == 2
    assert job_ask("docsize_measure", smoke).threads == 1         # a cluster: the node is its own anyway
    for rule in ("docsize_load", "arraygrowth_run", "flatnested_load"):
        assert job_ask(rule, smoke, local_cores=2).threads == 1, rule
