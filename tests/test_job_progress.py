"""Jobs that run over ~10 s at the default config show a progress bar on a terminal (costlab.progress)."""
from __future__ import annotations

from test_engine_appversions import _tiny_config


class Recorder:
    """Stands in for costlab.progress.progress: records each bar's total and how far it got."""

    def __init__(self):
        self.bars = []

    def __call__(self, iterable=None, total=None, desc="", unit="it"):
        bar = Bar(total, desc, unit)
        self.bars.append(bar)
        return bar


class Bar:
    def __init__(self, total, desc, unit):
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0

    def update(self, n=1):
        self.n += n

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_an_appversions_engine_version_job_counts_its_upserts(tmp_path, monkeypatch):
    """The per-version engine job (6-21 s each at the default) used to run without a bar: the in-process
    loop over versions had one, each workflow job has only its own version."""
    import costlab.appversions.engine as engine

    recorder = Recorder()
    monkeypatch.setattr(engine, "progress", recorder)
    from costlab.appversions.params import EngineVersionParams
    from costlab.config import run_facts

    config = _tiny_config(tmp_path, ["appV5R3"])
    record = engine.run_version_job(EngineVersionParams.from_config(config), run_facts(config, "appversions"),
                                    "appV5R3", tmp_path / "appV5R3.json")
    [bar] = recorder.bars
    events = record["provenance"]["extra"]["events"]
    assert (bar.desc, bar.unit, bar.total) == ("engine appV5R3", "event", events)
    assert bar.n == events   # every event's upsert counted, the bar ends full
