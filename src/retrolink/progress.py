"""Progress output for long steps: one line per step, full tool output in a log file."""
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


class StepFailed(Exception):
    """A build or setup step failed; the message says what and where the log is."""


def say(msg: str) -> None:
    print(f"retrolink: {msg}", file=sys.stderr, flush=True)


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
    log.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ, **(env or {}))
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(map(str, cmd))}\n")
        out.flush()
        bar = None
        if progress_total and sys.stderr.isatty():
            from tqdm import tqdm
            bar = tqdm(total=progress_total, desc=desc, unit="step", leave=False)
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        last_report = time.monotonic()
        count = 0
        for line in proc.stdout:
            out.write(line)
            if progress_marker and line.startswith(progress_marker):
                count += 1
                if bar:
                    bar.update(1)
                elif progress_total and time.monotonic() - last_report > 30:
                    # not a terminal (CI): a line every 30 s is enough
                    say(f"  {desc}: {count}/{progress_total}")
                    last_report = time.monotonic()
        rc = proc.wait()
        if bar:
            bar.close()
    if rc != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise StepFailed(f"command failed (exit {rc}): {' '.join(map(str, cmd))}\n"
                         + "\n".join("    " + t for t in tail)
                         + f"\n  full log: {log}")
