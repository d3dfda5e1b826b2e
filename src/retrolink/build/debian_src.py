"""Debian source packages through a private apt state (the host's apt config is untouched)."""
import hashlib
from pathlib import Path

from retrolink import paths
from retrolink.progress import StepFailed, run_logged, step


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


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def version_dir_name(version: str) -> str:
    # "1:10.0.13+ds-0+deb13u1" -> "10.0.13+ds-0+deb13u1" (no ':' in paths)
    return version.split(":", 1)[-1]


def fetch_verified(src: dict, downloads: Path, pin_file: Path, hint: str, log: Path) -> Path:
    """The pinned source package src (a pin file's [source] table: package, version,
    suites, mirrors, sha256 of each file) downloaded once into downloads, every file
    checked against the pin; its .dsc."""
    expected = src["sha256"]
    if not all((downloads / f).exists() for f in expected):
        with step(f"downloading Debian source package {src['package']} {src['version']}"):
            try:
                download_source(src["package"], src["version"], downloads, src["suites"],
                                src["mirror"], src["security_mirror"], log)
            except StepFailed as e:
                raise StepFailed(f"could not fetch {src['package']}={src['version']} from "
                                 f"Debian ({', '.join(src['suites'])}).\n  {hint}\n{e}") from e
    for name, digest in expected.items():
        got = sha256(downloads / name)
        if got != digest:
            raise StepFailed(f"{downloads / name}: sha256 {got} does not match the pin {digest} "
                             f"in {pin_file}; delete the file to download it again")
    dscs = list(downloads.glob(f"{src['package']}_{version_dir_name(src['version'])}.dsc"))
    if not dscs:
        raise StepFailed(f"no .dsc for {src['package']} {src['version']} in {downloads}")
    return dscs[0]
