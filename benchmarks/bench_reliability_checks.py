"""What the reliability checks add to a no-op `snakemake all` (goal < 0.3 s), piece by piece.

A no-op run parses the Snakefile (rules/common.smk: the interpreter path check, then config
validation with the size count, the load-test phases, the engine limits and, with a URI,
pymongo's option parser) and ends with the summary (onsuccess), which checks findings.csv
against its digest record. Each piece is timed in-process, best of 5, on config/smoke.yaml with
an external URI carrying options, and on a findings.csv of 400 rows written as the workflow
writes it. `make all`'s pre-check also reads each config file with the bounded YAML loader:
printed beside, not part of `snakemake all`.

Issue #43's checks are timed too: the config files read again by the loader that refuses a key given
twice (check_config_files), the limits against WiredTiger and this machine (limit_problem: memory,
free disk), the sample's content digest (content_stamp, for the two rules that take it) and its mongod
limits (document_problem); and apart, a layout file's import in a child with a time limit, which runs
only when a config names one.

    python benchmarks/bench_reliability_checks.py
"""
from __future__ import annotations

import os
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import common
import yaml  # noqa: E402

from costlab import digests  # noqa: E402
from costlab.appversions.phases import empty_phase_problem  # noqa: E402
from costlab.config import (  # noqa: E402
    ROOT,
    _LimitedLoader,
    check_config_files,
    check_finite,
    check_size,
    load_config,
    run_arguments,
)
from costlab.credentials import uri_problem  # noqa: E402
from costlab.digests import check  # noqa: E402
from costlab.docsize.documents import read_sample  # noqa: E402
from costlab.documentlimits import document_problem  # noqa: E402
from costlab.engine.extensions import compressors_loaded  # noqa: E402
from costlab.engine.limits import engine_problem  # noqa: E402
from costlab.io import sweep_results  # noqa: E402
from costlab.paths import shell_safe_python  # noqa: E402
from costlab.plan import limit_problem, plan_problem  # noqa: E402

URI = "mongodb://alice@db.example:27017/?connectTimeoutMS=2000&replicaSet=rs0&authSource=admin"
COMMAND = "python benchmarks/bench_reliability_checks.py"
SAMPLE = ROOT / "config" / "documents" / "ticket.json"   # config/smoke.yaml's document of yours


def main() -> None:
    common.header(f"Reliability checks in a no-op snakemake all ({common.machine()})")
    config = load_config(
        ROOT / "config" / "smoke.yaml", overrides={"server": {"backend": "external", "uri": URI}}
    )
    pieces = {
        "interpreter path (shell_safe_python)": shell_safe_python,
        "config size count (check_size)": lambda: check_size(config),
        "finite numbers (check_finite)": lambda: check_finite(config),
        "plan ceilings (plan_problem)": lambda: plan_problem(config),
        "load-test phases (empty_phase_problem)": lambda: empty_phase_problem(
            config["appversions"]["loadtest"]
        ),
        "engine limits (engine_problem)": lambda: engine_problem(config),
        "URI options, pymongo's parser (uri_problem)": lambda: uri_problem(URI),
        "run's config arguments for messages (run_arguments)": lambda: run_arguments(
            [ROOT / "config" / "smoke.yaml"], {"server": "{backend: external, uri: '" + URI + "'}"}),
        # the Snakefile calls it once per engine rule: three times
        "compressors loaded, x3 (compressors_loaded)": lambda: [compressors_loaded() for _ in range(3)],
        # issue #43
        "config files again, a key given twice refused (check_config_files)": lambda: check_config_files(
            [ROOT / "config" / "smoke.yaml"]),
        "limits against WiredTiger and this machine (limit_problem)": lambda: limit_problem(config),
        "sample's content digest, x2 rules (content_stamp)": lambda: [
            digests._content_digests.clear() or digests.content_stamp(SAMPLE) for _ in range(2)],
        "sample's mongod limits (document_problem)": lambda: document_problem(read_sample(SAMPLE), "sample"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        import polars as pl

        from costlab.io import write_csv

        findings = Path(tmp) / "findings.csv"
        write_csv(pl.DataFrame({"study": ["docsize"] * 400, "finding": [f"finding {i}" for i in range(400)],
                                "verdict": ["reproduced"] * 400, "published": [1.0] * 400}), findings)
        pieces["summary: findings.csv digest (check)"] = lambda: check(findings)
        # a run's start (onstart; not in a no-op run, which starts no job): a results tree of the smoke
        # run's shape, 60 folders of 10 files, with one leftover temporary file to look at
        tree = Path(tmp) / "results"
        for folder in range(60):
            (tree / f"f{folder}").mkdir(parents=True)
            for name in range(10):
                (tree / f"f{folder}" / f"r{name}.csv").write_text("x")
        (tree / "f0" / ".r0.csv.12345678.1.abcdefgh.tmp").write_text("partial")
        sweep = common.best_of(lambda: sweep_results(tree), repeat=5)[0]
        total = cold_total = 0.0
        for name, fn in pieces.items():
            cold, _ = common.best_of(fn, repeat=1)   # first call: includes what it imports (pymongo's parser)
            seconds, _ = common.best_of(fn, repeat=5)
            total += seconds
            cold_total += cold
            common.result(
                name, seconds * 1000, "ms", note=f"first call {cold * 1000:.1f} ms", command=COMMAND
            )
    common.result("added to a no-op snakemake all (first calls)", cold_total, "s", target=0.3, at_least=False,
                  note=f"warm {total * 1000:.2f} ms", command=COMMAND)
    common.result("a run's start: sweep of leftover temporary files, 600 result files (not in a no-op run)",
                  sweep * 1000, "ms", command=COMMAND)
    text = (ROOT / "config" / "smoke.yaml").read_text()
    bounded, _ = common.best_of(lambda: yaml.load(text, Loader=_LimitedLoader), repeat=5)
    plain, _ = common.best_of(lambda: yaml.safe_load(text), repeat=5)
    common.result("pre-check: bounded YAML loader, smoke.yaml (not in snakemake)", bounded * 1000, "ms",
                  note=f"safe_load {plain * 1000:.2f} ms", command=COMMAND)
    from costlab.appversions.variants import trial_import_problem

    layout = "from costlab.appversions.layouts import IdDay\n\nclass Mine(IdDay):\n    name = 'mine_day'\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mine.py"
        path.write_text(layout)
        trial, problem = common.best_of(lambda: trial_import_problem(path), repeat=3)
        assert problem is None, problem
        from costlab.appversions import variants

        os.chdir(tmp)   # the vetted contents are kept in the working directory's .snakemake/
        try:
            variants._vetted_import_problem(path)
            vetted, _ = common.best_of(lambda: variants._vetted_import_problem(path), repeat=5)
        finally:
            os.chdir(ROOT)
    common.result("a layout file's import in a child (only when a config names one: once per content)",
                  trial * 1000, "ms", command=COMMAND)
    common.result("the same layout file already vetted (the Snakefile after the pre-check)", vetted * 1000,
                  "ms", command=COMMAND)


if __name__ == "__main__":
    main()
