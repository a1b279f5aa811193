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


def test_progress_draws_on_a_terminal_that_reports_no_size():
    """A new pseudo-terminal reports 0 columns (as under script(1) or ssh -t), and tqdm then drew nothing."""
    import os
    import pty
    import subprocess

    code = ("import time\nfrom costlab.progress import progress\n"
            "for _ in progress(range(3), desc='demo-bar'): time.sleep(0.7)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "COLUMNS")}
    leader, follower = pty.openpty()  # size 0 x 0
    try:
        assert os.get_terminal_size(follower).columns == 0
        proc = subprocess.run([sys.executable, "-c", code], stderr=follower, stdout=subprocess.DEVNULL,
                              env=env, timeout=60)
        os.close(follower)
        follower = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other end is closed: all read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert proc.returncode == 0
    assert b"demo-bar" in drawn and b"/3" in drawn
