import subprocess
import sys

import pytest
import yaml

from costlab.config import ROOT, ConfigError, load_config


def test_defaults_are_filled_in():
    config = load_config()
    assert config["server"]["backend"] == "auto"
    assert config["server"]["image"] == "mongo:8.0"
    assert config["docsize"]["sizes_kb"] == [1, 4, 16, 64]


@pytest.mark.parametrize(
    "override, key, allowed",
    [
        ({"server": {"backend": "podman"}}, "server.backend", "auto, docker, binary, external"),
        ({"docsize": {"sizes_kb": [1, -4]}}, "docsize.sizes_kb", "minimum"),
        ({"appversions": {"events_per_year": "lots"}}, "appversions.events_per_year", "integer"),
        ({"appversions": {"versions": ["appV9"]}}, "appversions.versions", "appV1"),
        ({"server": {"backend": "external"}}, "server.uri", "required"),
        # a misspelt key names the keys its section takes
        (
            {"docsize": {"size_kb": [1, 64]}},
            "'size_kb' was unexpected",
            "keys docs_per_collection, sizes_kb, seed",
        ),
        (
            {"docsise": {"sizes_kb": [1]}},
            "'docsise' was unexpected",
            "keys server, compare, matrix, studies, appversions, docsize",
        ),
    ],
)
def test_invalid_config_names_key_and_what_is_allowed(override, key, allowed):
    with pytest.raises(ConfigError) as err:
        load_config(overrides=override)
    assert key in str(err.value) and allowed in str(err.value)


def test_every_config_file_is_valid():
    for path in sorted((ROOT / "config").glob("*.yaml")):
        if path.name != "schema.yaml":
            load_config(path)


def test_snakemake_rejects_invalid_config_before_any_job(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"docsize": {"docs_per_collection": -5}}))
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "all", "--configfile", str(bad)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "docsize.docs_per_collection" in result.stderr + result.stdout


def _check_without_a_server(tmp_path, *overrides):
    import shutil
    (tmp_path / "bash").symlink_to(shutil.which("bash"))  # a PATH with bash but no mongod
    # and `which`: the Slurm executor plugin (make test-slurm puts it in the venv) calls it on import
    (tmp_path / "which").symlink_to(shutil.which("which"))
    env = {"PATH": str(tmp_path), "DOCKER_HOST": "unix:///nonexistent/docker.sock", "HOME": str(tmp_path)}
    files = [str(ROOT / "config" / "config.yaml")]
    # nor the bundled mongod (tests/test_server_wheel.py: a machine where it cannot install or start)
    overrides = ({"server": {"mongod_wheel": False}}, *overrides)
    for i, override in enumerate(overrides):
        path = tmp_path / f"override{i}.yaml"
        path.write_text(yaml.safe_dump(override))
        files.append(str(path))
    return subprocess.run([sys.executable, "-m", "costlab.server.check", "--configfile", *files],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)


def test_make_all_without_a_server_goes_on_with_one_line(tmp_path):
    result = _check_without_a_server(tmp_path)
    assert result.returncode == 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "server-free parts only" in lines[0] and "server.backend: external" in lines[0]


def test_make_all_fails_fast_when_the_configured_server_cannot_be_had(tmp_path):
    result = _check_without_a_server(tmp_path, {"server": {"backend": "docker"}})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Docker engine answers" in lines[0]


def test_environment_yml_mirrors_the_pinned_requirements():
    pinned = {line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert set(pip_section) == pinned


# the smoke config's plan is the session's (make test); the default and full configs' plans are whole-workflow
# plans of their own (marker workflow: make test-workflow)
@pytest.mark.parametrize("configfile", [pytest.param("config/config.yaml", marks=pytest.mark.workflow),
                                        "config/smoke.yaml",
                                        pytest.param("config/full.yaml", marks=pytest.mark.workflow)])
def test_dry_run_plans_every_study(configfile, tmp_path, request):
    if configfile == "config/smoke.yaml":   # the session's plan of it (tests/conftest.py), made the same way
        result = request.getfixturevalue("smoke_plan")
    else:
        # In a scratch directory, so results already built in the checkout do not shorten the plan.
        for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles", "environment.yml"):
            (tmp_path / name).symlink_to(ROOT / name)
        # A configured server (a dry run connects to nothing): without one only the server-free parts are
        # planned.
        result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "all", "--configfile", configfile,
                                 "--config", "server={backend: external, uri: 'mongodb://127.0.0.1:1/'}"],
                                cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    for rule in ("docsize_measure", "appversions_loadtest", "arraygrowth_run", "flatnested_measure",
                 "uniqueidx_conformance", "report"):
        assert rule in result.stdout, f"{rule} missing from the plan for {configfile}"


def test_lint_is_clean():
    result = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0
    assert "Lints for" not in result.stdout + result.stderr


def _schema_keys(node: dict, prefix: str = "") -> list[str]:
    props = node.get("properties")
    if not props:
        return [prefix]
    return [key for name, child in props.items()
            for key in _schema_keys(child, f"{prefix}.{name}" if prefix else name)]


def test_config_readme_documents_every_config_key():
    readme = (ROOT / "config" / "README.md").read_text()
    schema = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())
    keys = _schema_keys(schema)
    assert len(keys) > 20
    missing = [key for key in keys if f"`{key}`" not in readme]
    assert not missing, f"config/README.md does not document config keys {missing}"


@pytest.mark.parametrize("appversions, key, message", [
    # appV2 is loaded but not configured: no rule makes its events' data
    ({"versions": ["appV1"], "load_versions": ["appV1", "appV2"]},
     "appversions.load_versions", "['appV2'] are not in appversions.versions (allowed: appV1)"),
    # appV2 is configured but not loaded: a load test would have no data to run on
    ({"versions": ["appV1", "appV2"], "load_versions": ["appV1"], "loadtest": {"versions": ["appV2"]}},
     "appversions.loadtest.versions", "['appV2'] are not loaded (allowed: appV1)"),
    # with load_versions unset every configured version is loaded
    ({"versions": ["appV1"], "load_versions": None, "loadtest": {"versions": ["appV3"]}},
     "appversions.loadtest.versions", "['appV3'] are not loaded (allowed: appV1)"),
])
def test_version_subsets_are_checked_with_the_config(appversions, key, message):
    # checked by config.check_semantics (before the rule files plan anything), naming the key
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"appversions": appversions})
    assert f"invalid config key {key}: {message}" in str(err.value)
