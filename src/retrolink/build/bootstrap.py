"""Host setup: install the Debian packages retrolink needs (idempotent, never prompts)."""
import os
import subprocess
from pathlib import Path

from retrolink import paths
from retrolink.progress import StepFailed, run_logged, say, step

APT_LISTS = [paths.REPO / "deps" / "apt.txt"]


def package_list(f: Path) -> list[str]:
    """The packages a list names, one a line, # comments."""
    pkgs = []
    if f.exists():
        for line in f.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and line not in pkgs:
                pkgs.append(line)
    return pkgs


def wanted_packages(extra=()) -> list[str]:
    pkgs = []
    for f in APT_LISTS:
        pkgs += [p for p in package_list(f) if p not in pkgs]
    return pkgs + [p for p in extra if p not in pkgs]


def missing_packages(pkgs) -> list[str]:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n", *pkgs],
                         capture_output=True, text=True).stdout
    installed = {l.split()[0] for l in out.splitlines() if l.endswith(" installed")}
    return [p for p in pkgs if p not in installed]


def apt_install(pkgs, log: Path) -> None:
    """Install pkgs if any is missing. Root installs; others get the command to run."""
    missing = missing_packages(pkgs)
    if not missing:
        return
    if os.geteuid() != 0:
        raise StepFailed("missing Debian packages: " + " ".join(missing)
                         + "\n  install them with: sudo apt-get install -y " + " ".join(missing))
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    with step(f"installing {len(missing)} Debian packages ({' '.join(missing[:6])}"
              f"{' ...' if len(missing) > 6 else ''})"):
        stamp = paths.cache_dir() / "apt-updated"
        if not stamp.exists():
            run_logged(["apt-get", "update", "-q"], log, env=env)
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        try:
            run_logged(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing],
                       log, env=env)
        except StepFailed:
            say("apt-get install failed; refreshing the package index and trying once more")
            run_logged(["apt-get", "update", "-q"], log, env=env)
            run_logged(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing],
                       log, env=env)


def setup_host(log: Path, extra=()) -> None:
    apt_install(wanted_packages(extra), log)
