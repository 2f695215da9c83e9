"""Progress of long jobs: steps read from task output, plain lines off a terminal (rate and
ETA from a controlled clock), a tqdm bar when asked, and real `launch` / `run` jobs."""
import io
import sys

import pytest

from tensorweave.cli import progress
from tensorweave.cli.main import main as cli_main


@pytest.mark.parametrize("line, step", [
    ("[worker:0] worker 0: local step 25, global step 50, loss 0.3", 50),
    ("[worker:1] worker 1 done: steps=5 global_step=12 loss 1 -> 0", 12),
    ("INFO:tensorflow:global_step: 7", 7),
    ("[1] step 30 loss 0.5", 30),
    ("[0] Step: 4", 4),
    ("[worker:0] 5 steps done", None),
    ("epoch 1/5: loss 0.2", None),
])
def test_the_step_a_line_reports(line, step):
    assert progress.step_in(line) == step


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_give_rate_and_eta_at_most_once_an_interval():
    clock, out = Clock(), io.StringIO()
    bar = progress.Progress(100, stream=out, interval=10.0, clock=clock)
    clock.now += 2.0
    bar.update(10)  # first line at once: 10 steps in 2 s
    clock.now += 3.0
    bar.update(20)  # within the interval: no line
    clock.now += 7.0
    bar.update(40)  # 10 s since the last line: 40 steps in 12 s
    bar.update(30)  # a smaller step (another worker's) does not move it back
    clock.now += 10.0
    bar.update(100)
    bar.close()
    assert out.getvalue().splitlines() == [
        "[progress] 10/100 steps (10%), 5.0 steps/s, ETA 18 s",
        "[progress] 40/100 steps (40%), 3.3 steps/s, ETA 18 s",
        "[progress] 100/100 steps (100%), 4.5 steps/s",
    ]


def test_long_etas_read_in_minutes_and_hours():
    clock = Clock()
    bar = progress.Progress(100000, stream=io.StringIO(), clock=clock)
    clock.now += 10.0
    bar.update(10)
    assert bar.line().endswith("1.0 steps/s, ETA 27 h 46 min")
    clock.now = 100.0 + 99880
    bar.update(99880)
    assert bar.line().endswith("ETA 2 min 00 s")


def test_a_tqdm_bar_when_asked():
    pytest.importorskip("tqdm")
    out = io.StringIO()
    bar = progress.Progress(8, stream=out, use_tqdm=True)
    for step in range(1, 9):
        bar.update(step)
    bar.close()
    text = out.getvalue()
    assert "8/8" in text and "step/s" in text
    assert "[progress]" not in text


def test_a_stream_that_is_not_a_terminal_gets_plain_lines():
    out = io.StringIO()
    bar = progress.Progress(5, stream=out)
    bar.update(5)
    assert out.getvalue().startswith("[progress] 5/5 steps (100%)")


def test_a_bad_total_is_named():
    with pytest.raises(ValueError, match="total number of steps"):
        progress.Progress(0)


_COUNTER = ("import time\n"
            "for i in range(1, 13):\n"
            "    print(f'global step {i}', flush=True)\n"
            "    time.sleep(0.01)\n")


@pytest.mark.timeout(60)
def test_launch_and_run_follow_the_steps_the_tasks_print(capsys):
    assert cli_main(["launch", "--ps", "0", "--workers", "2", "--steps", "12", "--",
                     sys.executable, "-c", _COUNTER]) == 0
    captured = capsys.readouterr()
    assert "[worker:1] global step 12" in captured.out
    assert captured.err.strip().splitlines()[-1].startswith("[progress] 12/12 steps (100%)")
    assert cli_main(["run", "-np", "2", "--steps", "12", sys.executable, "-c",
                     _COUNTER]) == 0
    captured = capsys.readouterr()
    assert "[1] global step 12" in captured.out
    assert captured.err.strip().splitlines()[-1].startswith("[progress] 12/12 steps (100%)")
    assert cli_main(["launch", "--workers", "1", "--steps", "0", "--", "true"]) == 2
