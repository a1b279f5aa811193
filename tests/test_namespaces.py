"""Runs that share a deployment never mix: per-run databases, load markers, measurement leases, cleanup.

Two "checkouts" are two working directories (the run id derives from host and directory) or two
values of server.namespace, against one stand-in through the external backend.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from costlab import namespaces
from costlab.config import load_config, run_facts
from costlab.flatnested.params import LoadParams, MeasureParams
from costlab.server import measuring_job
from costlab.server.lease import LEASE_COLLECTION, LeaseHeld, data_dir_lease, document_lease, lease_path
from costlab.server.markers import DatasetMismatch


def _config(external_server_config, **sections) -> dict:
    return load_config(overrides={"server": external_server_config, **sections})


def test_database_name_depends_on_run_and_data_parameters(tmp_path):
    base = load_config()
    a = namespaces.database_name(base, "appversions", cwd=tmp_path / "a")
    b = namespaces.database_name(base, "appversions", cwd=tmp_path / "b")
    other_data = load_config(overrides={"appversions": {"events_per_year": 1200}})
    other_schedule = load_config(overrides={"appversions": {"loadtest": {"rate_scale": 0.5}}})
    # the calendar window has other events than the authors' (default): other data, another database
    other_window = load_config(overrides={"appversions": {"event_window": "calendar"}})
    assert namespaces.database_name(other_window, "appversions", cwd=tmp_path / "a") != a
    assert a != b                                                    # another checkout
    assert namespaces.database_name(other_data, "appversions", cwd=tmp_path / "a") != a     # other data
    assert namespaces.database_name(other_schedule, "appversions", cwd=tmp_path / "a") == a  # same data
    assert a.startswith("costlab_appversions_") and len(a) <= 63
    named = load_config(overrides={"server": {"namespace": "labA"}})
    assert namespaces.database_name(named, "docsize").startswith("costlab_docsize_labA_")
    assert namespaces.run_databases(
        [a, b, "costlab_appversions", "other"], namespaces.run_id(base, tmp_path / "a")
    ) == [a]


def _load_flatnested(config, tmp_path, name="structured_2x5"):
    from costlab.flatnested.generate import generate_values
    from costlab.flatnested.run import load_dataset

    values = tmp_path / "values.parquet"
    generate_values(config["flatnested"]["documents"], 2, seed=config["flatnested"]["seed"]).write_parquet(
        values
    )
    data_dir = tmp_path / "data" / name
    load_dataset(LoadParams.from_config(config), run_facts(config, "flatnested"), values, name, data_dir,
                 tmp_path / "load.json")
    return data_dir


def _measure_flatnested(config, data_dir, provenance_path, runs):
    from costlab.flatnested.run import measure_dataset

    params = MeasureParams(data=LoadParams.from_config(config).data, runs=runs, warmup_runs=0)
    return measure_dataset(
        params, run_facts(config, "flatnested"), data_dir, "structured_2x5", provenance_path
    )


def test_two_checkouts_with_other_data_each_measure_their_own(tmp_path, monkeypatch, external_server_config,
                                                              mongo_client):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    config_a = _config(external_server_config, flatnested={"documents": 40})
    dir_a = _load_flatnested(config_a, tmp_path / "a")
    monkeypatch.chdir(tmp_path / "b")
    config_b = _config(external_server_config, flatnested={"documents": 70})
    _load_flatnested(config_b, tmp_path / "b")
    # A again (say, with another number of runs): still A's 40 documents, not B's 70.
    monkeypatch.chdir(tmp_path / "a")
    raw = _measure_flatnested(config_a, dir_a, tmp_path / "a" / "measure.json", runs=2)
    assert raw["documents"].unique().to_list() == [40]
    assert raw["docs_examined"].unique().to_list() == [40]
    provenance = json.loads((tmp_path / "a" / "measure.json").read_text())
    assert provenance["extra"]["namespace"]["database"] == namespaces.database_name(config_a, "flatnested")
    assert provenance["extra"]["namespace"]["data_params"]["documents"] == 40


def test_a_reload_by_another_run_is_detected_before_measuring(tmp_path, monkeypatch, external_server_config):
    # Same data parameters and the same namespace (a shared name): the second load replaces the
    # first run's collection. Counts alike, so only the marker tells them apart.
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    config = _config(external_server_config, flatnested={"documents": 30}) | {}
    config["server"] = config["server"] | {"namespace": "shared_t1"}
    dir_a = _load_flatnested(config, tmp_path / "a")
    _load_flatnested(config, tmp_path / "b")
    with pytest.raises(DatasetMismatch, match="not the data this run loaded") as err:
        _measure_flatnested(config, dir_a, tmp_path / "a" / "measure.json", runs=1)
    assert "snakemake --forcerun" in str(err.value) and "structured_2x5" in str(err.value)
    assert not (tmp_path / "a" / "measure.json").exists()


def test_an_interrupted_load_leaves_no_marker(tmp_path, external_server_config, mongo_client):
    config = _config(external_server_config) | {}
    config["server"] = config["server"] | {"namespace": "interrupted_t"}
    data_dir = tmp_path / "data" / "d1"
    with measuring_job(config, "standalone", tmp_path / "l1.json", data_dir=data_dir, study="flatnested",
                       dataset="d1", loads=True) as server:
        data_dir.mkdir(parents=True)
        (data_dir / "dataset.json").write_text(json.dumps({"load_id": server.load_id}))
    with pytest.raises(RuntimeError):
        with measuring_job(config, "standalone", tmp_path / "l2.json", data_dir=tmp_path / "data" / "d2",
                           study="flatnested", dataset="d1", loads=True):
            raise RuntimeError("killed half way")
    # The first load's dataset.json is intact, but the server's marker went with the second load.
    with pytest.raises(DatasetMismatch, match="not loaded"):
        with measuring_job(config, "standalone", tmp_path / "m.json", data_dir=data_dir, study="flatnested",
                           dataset="d1"):
            pass


def test_document_lease_refuses_naming_the_holder_and_expires(external_server_config, mongo_client):
    db = mongo_client["costlab_leasetest_t"]
    db[LEASE_COLLECTION].delete_many({})
    with document_lease(db, "ds", "job_one") as holder:
        with pytest.raises(LeaseHeld) as err:
            with document_lease(db, "ds", "job_two"):
                pass
        assert "job_one" in str(err.value) and str(holder["pid"]) in str(err.value)
        with document_lease(db, "other_dataset", "job_two"):
            pass   # another dataset is not held
    # A holder killed hard leaves its document; once expired, the next job takes it.
    past = datetime.now(timezone.utc) - timedelta(seconds=1)
    db[LEASE_COLLECTION].insert_one(
        {"_id": "ds", "token": "dead", "holder": {"job": "ghost"}, "expires_at": past}
    )
    with document_lease(db, "ds", "job_three"):
        assert db[LEASE_COLLECTION].find_one({"_id": "ds"})["holder"]["job"] == "job_three"
    assert db[LEASE_COLLECTION].find_one({"_id": "ds"}) is None   # released at the end
    mongo_client.drop_database(db.name)


def test_two_measuring_jobs_on_one_external_dataset_do_not_overlap(tmp_path, external_server_config):
    config = _config(external_server_config) | {}
    config["server"] = config["server"] | {"namespace": "overlap_t"}
    with measuring_job(config, "standalone", tmp_path / "one.json", study="arraygrowth", job="first"):
        with pytest.raises(LeaseHeld, match="first"):
            with measuring_job(
                config, "standalone", tmp_path / "two.json", study="arraygrowth", job="second"
            ):
                pass
    assert (tmp_path / "one.json").exists() and not (tmp_path / "two.json").exists()


HOLD = """
import sys, time
from costlab.server.lease import data_dir_lease
with data_dir_lease(sys.argv[1], "orphaned_loadtest"):
    print("held", flush=True)
    time.sleep(120)
"""


def test_data_dir_lease_refuses_while_an_orphan_holds_it_and_frees_when_it_dies(tmp_path):
    data_dir = tmp_path / "data" / "appV4"
    orphan = subprocess.Popen([sys.executable, "-c", HOLD, str(data_dir)], stdout=subprocess.PIPE, text=True)
    try:
        assert orphan.stdout.readline().strip() == "held"
        with pytest.raises(LeaseHeld) as err:
            with data_dir_lease(data_dir, "appversions_loadtest_appV4"):
                pass
        assert "orphaned_loadtest" in str(err.value) and f"pid {orphan.pid}" in str(err.value)
        # measuring_job takes it before starting any server (the backend is never asked).
        with pytest.raises(LeaseHeld):
            with measuring_job(
                {"server": {"backend": "binary", "mongod": "/nonexistent/mongod"}},
                "standalone",
                tmp_path / "p.json",
                data_dir=data_dir,
            ):
                pass
    finally:
        orphan.send_signal(signal.SIGKILL)
        orphan.wait()
    with data_dir_lease(data_dir, "next") as holder:   # the kernel released it with the process
        assert json.loads(lease_path(data_dir).read_text())["job"] == holder["job"] == "next"


def test_cleanup_drops_only_this_runs_databases(tmp_path, server_uri, mongo_client):
    config = tmp_path / "run.yaml"
    config.write_text(f"server: {{backend: external, uri: '{server_uri}', namespace: cleanme}}\n")
    mine = ["costlab_docsize_cleanme_0123abcd", "costlab_appversions_cleanme_89abcdef"]
    others = ["costlab_docsize_otherrun_0123abcd", "costlab_docsize", "cleanme_keep"]
    for name in mine + others:
        mongo_client[name]["x"].insert_one({})
    dry = subprocess.run(
        [sys.executable, "-m", "costlab.server.cleanup", "--configfile", str(config), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dry.returncode == 0, dry.stderr
    assert all(name in dry.stdout for name in mine) and set(mine) <= set(mongo_client.list_database_names())
    done = subprocess.run([sys.executable, "-m", "costlab.server.cleanup", "--configfile", str(config)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    left = set(mongo_client.list_database_names())
    assert not set(mine) & left and set(others) <= left
    for name in others:
        mongo_client.drop_database(name)


def test_the_lease_file_lives_outside_data(tmp_path):
    # data/ lists the datasets (tests and users read it); Snakemake deletes a data directory on a rerun.
    data_dir = tmp_path / "results" / "docsize" / "data" / "orders_1k"
    with data_dir_lease(data_dir, "job"):
        pass
    assert lease_path(data_dir) == tmp_path / "results" / "docsize" / ".leases" / "orders_1k.lease"
    assert not (tmp_path / "results" / "docsize" / "data").exists()


def test_the_rules_data_params_are_the_namespaces_data_keys():
    # One declaration: each load rule's data params (costlab/<study>/params.py) are namespaces.data_params,
    # so what reruns a load is what names its database.
    import costlab.appversions.params as av
    import costlab.docsize.params as ds
    import costlab.flatnested.params as fn

    config = load_config()
    for study, params in (
        ("appversions", av.LoadParams),
        ("docsize", ds.LoadParams),
        ("flatnested", fn.LoadParams),
    ):
        assert params.declare(config)["data"] == namespaces.data_params(config, study), study
    # config/config.yaml's defaults: the window is part of the data (it was missing here once)
    assert namespaces.data_params(config, "appversions") == {
        "events_per_year": 20000, "seed": 42, "event_window": "authors", "batch_size": 250}
