"""Progress of a long job (`demo`, `launch --steps`, `run --steps`): a tqdm bar with steps/s
and ETA when the stream is a terminal and tqdm is installed (the `progress` extra), plain
lines otherwise ("[progress] 120/500 steps (24%), 35.2 steps/s, ETA 11 s"), at most one
every `interval` seconds and one at the end, so logs stay short.

`observe(line)` reads a task's output line for its step and passes the line on: the first
of "global step N" / "global_step=N" / "global_step: N", else "step N"; the job's progress is
the largest step seen (asynchronous workers share one global step; ranks count their own).
"""
import re
import sys
import time

_GLOBAL_STEP = re.compile(r"global[ _]step\s*[=:]?\s*(\d+)", re.IGNORECASE)
_STEP = re.compile(r"\bstep\s*[=:]?\s*(\d+)", re.IGNORECASE)


def step_in(line):
    """The step a line reports, or None."""
    match = _GLOBAL_STEP.search(line) or _STEP.search(line)
    return int(match.group(1)) if match else None


def _duration(seconds):
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


class Progress:
    def __init__(self, total, stream=None, interval=10.0, use_tqdm=None, desc="steps",
                 clock=time.monotonic):
        if total is not None and total < 1:
            raise ValueError(f"progress: the total number of steps must be >= 1, got {total}")
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.step = 0
        self._clock = clock
        self._start = clock()
        self._last_line = None
        self._bar = None
        if use_tqdm is None:
            use_tqdm = bool(getattr(self.stream, "isatty", lambda: False)())
        if use_tqdm:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None  # plain lines: `pip install 'tensorweave[progress]'` for a bar
            if tqdm is not None:
                self._bar = tqdm(total=total, desc=desc, unit="step", file=self.stream,
                                 dynamic_ncols=True, smoothing=0.1)

    def update(self, step):
        """The job reached `step` (steps never go back)."""
        if step <= self.step:
            return
        self.step = step if self.total is None else min(step, self.total)
        if self._bar is not None:
            self._bar.update(self.step - self._bar.n)
            return
        now = self._clock()
        done = self.total is not None and self.step >= self.total
        if done or self._last_line is None or now - self._last_line >= self.interval:
            self._last_line = now
            print(self.line(now), file=self.stream, flush=True)

    def line(self, now=None):
        elapsed = max((now if now is not None else self._clock()) - self._start, 1e-9)
        rate = self.step / elapsed
        if self.total is None:
            return f"[progress] {self.step} steps, {rate:.1f} steps/s"
        text = (f"[progress] {self.step}/{self.total} steps ({self.step / self.total:.0%}), "
                f"{rate:.1f} steps/s")
        if rate > 0 and self.step < self.total:
            text += f", ETA {_duration((self.total - self.step) / rate)}"
        return text

    def write(self, text, file=None):
        """Prints a line of output without breaking the bar."""
        if self._bar is not None:
            self._bar.write(text, file=file or sys.stdout)
        else:
            print(text, file=file or sys.stdout, flush=True)

    def observe(self, line):
        step = step_in(line)
        self.write(line)
        if step is not None:
            self.update(step)

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
