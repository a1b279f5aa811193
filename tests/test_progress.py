import sys

from costlab.progress import progress


def test_progress_is_silent_off_a_terminal(capsys):
    bar = progress(range(1000), total=1000, desc="loading")
    assert bar.disable
    assert sum(bar) == sum(range(1000))
    assert capsys.readouterr().err == ""


def test_progress_shows_on_a_terminal_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert not progress(range(3), desc="x").disable
    monkeypatch.setenv("CI", "true")
    assert progress(range(3), desc="x").disable
