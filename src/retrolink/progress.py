"""Progress output for long steps: one line per step, full tool output in a log file.

Steps may run in two threads at once (the build compiles QEMU while it builds the rest):
each tool's lines go to the log whole (one write each), a failure shows the tail of that
tool's own output, and a line said while a progress bar is shown is printed above it."""
import collections
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

_bars = 0                   # progress bars on the terminal now
_tools: dict = {}           # the tools run_logged is running: Popen -> thread
_tools_lock = threading.Lock()


class StepFailed(Exception):
    """A build or setup step failed; the message says what and where the log is."""


def say(msg: str) -> None:
    if _bars:
        from tqdm import tqdm
        tqdm.write(f"retrolink: {msg}", file=sys.stderr)
        return
    print(f"retrolink: {msg}", file=sys.stderr, flush=True)


def stop_tools(thread: threading.Thread) -> None:
    """Terminate the tools that run_logged runs for thread, or for a thread it started
    (build/jobs.py: rl_parent), whose steps then fail."""
    def started_by(t):
        while t is not None:
            if t is thread:
                return True
            t = getattr(t, "rl_parent", None)
        return False
    with _tools_lock:
        procs = [p for p, t in _tools.items() if started_by(t)]
    for p in procs:
        p.terminate()


@contextmanager
def step(title: str):
    """Announce a step and report how long it took."""
    start = time.monotonic()
    say(f"{title} ...")
    yield
    say(f"{title}: done in {time.monotonic() - start:.1f} s")


def run_logged(cmd, log: Path, cwd=None, env=None, progress_total: int = 0,
               progress_marker: str = "", desc: str = "") -> None:
    """Run cmd with its output appended to log. With progress_total, show a bar that
    advances on each output line starting with progress_marker (e.g. ninja's '[')."""
    global _bars
    log.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ, **(env or {}))
    tail = collections.deque(maxlen=15)
    # line-buffered: each line is one append, whole, when another thread's tool writes too
    with open(log, "a", buffering=1) as out:
        out.write(f"\n$ {' '.join(map(str, cmd))}\n")
        bar = None
        if progress_total and sys.stderr.isatty():
            from tqdm import tqdm
            bar = tqdm(total=progress_total, desc=desc, unit="step", leave=False)
            with _tools_lock:
                _bars += 1
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        with _tools_lock:
            _tools[proc] = threading.current_thread()
        try:
            last_report = time.monotonic()
            count = 0
            for line in proc.stdout:
                out.write(line)
                tail.append(line.rstrip("\n"))
                if progress_marker and line.startswith(progress_marker):
                    count += 1
                    if bar:
                        bar.update(1)
                    elif progress_total and time.monotonic() - last_report > 30:
                        # not a terminal (CI): a line every 30 s is enough
                        say(f"  {desc}: {count}/{progress_total}")
                        last_report = time.monotonic()
            rc = proc.wait()
        finally:
            with _tools_lock:
                del _tools[proc]
            if bar:
                with _tools_lock:
                    _bars -= 1
                bar.close()
    if rc != 0:
        raise StepFailed(f"command failed (exit {rc}): {' '.join(map(str, cmd))}\n"
                         + "\n".join("    " + t for t in tail)
                         + f"\n  full log: {log}")
