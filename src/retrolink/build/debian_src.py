"""Debian source packages through a private apt state (the host's apt config is untouched)."""
import os
from pathlib import Path

from retrolink import paths
from retrolink.progress import run_logged


def _apt_dir() -> Path:
    return paths.cache_dir() / "apt-src"


def apt_options(suites, mirror, security_mirror) -> list[str]:
    d = _apt_dir()
    (d / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    main = [s for s in suites if not s.endswith("-security")]
    sec = [s for s in suites if s.endswith("-security")]
    text = ""
    for uri, group in ((mirror, main), (security_mirror, sec)):
        if group:
            text += (f"Types: deb-src\nURIs: {uri}\nSuites: {' '.join(group)}\nComponents: main\n"
                     "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n")
    src = d / "sources.sources"
    if not src.exists() or src.read_text() != text:
        src.write_text(text)
    return ["-o", f"Dir::Etc::SourceList={src}", "-o", "Dir::Etc::SourceParts=/dev/null",
            "-o", f"Dir::State::Lists={d / 'lists'}", "-o", f"Dir::Cache={d / 'cache'}"]


def download_source(package: str, version: str, dest: Path, suites, mirror, security_mirror,
                    log: Path) -> None:
    """apt-get source --download-only package=version into dest (indexes refreshed first).
    apt checks each file against the signed Sources index."""
    opts = apt_options(suites, mirror, security_mirror)
    dest.mkdir(parents=True, exist_ok=True)
    run_logged(["apt-get", *opts, "update", "-q"], log)
    run_logged(["apt-get", *opts, "source", "--download-only", f"{package}={version}"], log,
               cwd=dest, env={"DEBIAN_FRONTEND": "noninteractive"})
