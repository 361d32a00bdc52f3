"""Install the system packages a make target needs: only what is missing, one package at a time.

Theory of operation:

* A target names its needs (``python -m oya.system_deps node chromium``). Each need is a list of
  requirements, each checked by what it provides (a command on PATH, a shared library, a Python
  module), never by a package name: Node.js from NodeSource bundles npm inside its ``nodejs``
  package, and a Chromium may be ``google-chrome``. Whatever provides it, a present requirement is
  left alone.
* Missing ones are installed in order, one Debian package each, with ``apt-get --no-remove``: apt
  may add packages but can never remove (replace) one that is there. An earlier package may provide
  a later requirement (NodeSource's nodejs brings npm), so each is checked again at its turn.
  ``apt-get update`` runs once, only when something must be installed.
* When an install cannot happen (not root, no apt-get, a conflict), one line names the package
  and what to run; apt's own output goes to a log file, not the terminal.

Runs with the system python3 before the virtualenv exists: standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.util import find_spec

from oya.errors import SetupError

MIN_PYTHON = (3, 11)
CHROMIUM_ENV = "OYA_CHROMIUM"
# Debian's package first; then the names other packagers use. Never a browser downloaded by a test tool.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """``$OYA_CHROMIUM`` if set (and executable), else the first of ``CHROMIUM_NAMES`` on PATH.

    The one lookup: the real-browser tests and the site benches (bench/browser_harness.py) start
    the Chromium this finds, so a Chromium already there under another name is used, never replaced.
    """
    chosen = os.environ.get(CHROMIUM_ENV)
    if chosen:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing_chromium_message() -> str:
    """One line saying why no Chromium was found and how to get one."""
    chosen = os.environ.get(CHROMIUM_ENV)
    if chosen:
        return f"{CHROMIUM_ENV}={chosen} is not an executable file; point it at a Chromium or unset it"
    return (
        f"no Chromium on PATH (looked for {', '.join(CHROMIUM_NAMES)}); run "
        f"`sudo apt-get install chromium`, or set {CHROMIUM_ENV}=/path/to/chromium"
    )


@dataclass(frozen=True)
class Requirement:
    what: str  # as the user knows it: a command, a library, "python3 -m venv"
    package: str  # the Debian package that provides it
    present: Callable[[], bool]
    # Why apt must not be asked for the package even though the requirement is missing, or None.
    blocker: Callable[[], str | None] = field(default=lambda: None)


def _command(name: str) -> Callable[[], bool]:
    return lambda: shutil.which(name) is not None


def _library(soname: str) -> Callable[[], bool]:
    def present() -> bool:
        # ldconfig lives in /sbin, which a normal user's PATH lacks on Debian
        ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/usr/sbin:/sbin")
        if ldconfig is None:
            return False
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, check=False).stdout
        return any(line.strip().startswith(soname + " ") for line in out.splitlines())

    return present


def _dpkg(*args: str) -> str | None:
    """``dpkg-query ARGS``'s output, or None without dpkg or when it fails."""
    if shutil.which("dpkg-query") is None:
        return None
    proc = subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _dpkg_owner(path: str) -> str | None:
    for candidate in dict.fromkeys((path, os.path.realpath(path))):
        out = _dpkg("-S", candidate)
        if out:
            return out.split(":", 1)[0]
    return None


def _npm_blocker() -> str | None:
    """Debian's npm package would replace a node that came with its own npm; say what to do instead."""
    node = shutil.which("node")
    if node is None:
        return None  # Debian's nodejs is about to be installed first, and its npm fits it
    owner = _dpkg_owner(node)
    if owner is None:
        return f"node at {node} is not from a Debian package; install npm the way that node was installed"
    fields = _dpkg("-W", "-f=${Version}\t${Provides}\t${Conflicts}", owner) or ""
    version, _, relations = fields.partition("\t")
    if "npm" in relations.replace(",", " ").split():
        return (
            f"{owner} {version} bundles npm and conflicts with Debian's npm package, yet npm is "
            f"missing; run: sudo apt-get install --reinstall {owner}"
        )
    return None


def _chromium_blocker() -> str | None:
    return missing_chromium_message() if os.environ.get(CHROMIUM_ENV) else None


def _venv_blocker() -> str | None:
    if sys.version_info < MIN_PYTHON:
        version = ".".join(map(str, sys.version_info[:3]))
        return f"{sys.executable} is Python {version}; Oya needs 3.11+ (run make with PYTHON=python3.11)"
    return None


NEEDS: dict[str, tuple[Requirement, ...]] = {
    # the virtualenv `make install` creates; Debian ships ensurepip (and so venv's pip) separately
    "venv": (
        Requirement(
            "python3 -m venv",
            "python3-venv",
            lambda: sys.version_info >= MIN_PYTHON and find_spec("ensurepip") is not None,
            _venv_blocker,
        ),
    ),
    # npm installs the site's browser runtime (site_template/vendor/package.json); node precompiles it
    "node": (
        Requirement("node", "nodejs", _command("node")),
        Requirement("npm", "npm", _command("npm"), _npm_blocker),
    ),
    # the real-browser tests and the site benchmark
    "chromium": (
        Requirement("chromium", "chromium", lambda: find_chromium() is not None, _chromium_blocker),
    ),
    # llama.cpp (`make llm`): built from source, then run with OpenMP
    "cxx": (Requirement("c++", "g++", _command("c++")),),
    "libgomp": (Requirement("libgomp.so.1", "libgomp1", _library("libgomp.so.1")),),
}


class Apt:
    """apt-get, run quietly into a log file; ``update`` at most once."""

    # wait for another apt or dpkg (an unattended upgrade) instead of failing on its lock
    OPTIONS = ("-q", "-y", "-o", "DPkg::Lock::Timeout=300")

    def __init__(self) -> None:
        fd, self.log = tempfile.mkstemp(prefix="oya-setup-apt-", suffix=".log")
        os.close(fd)
        self._updated = False

    def _run(self, *args: str) -> tuple[int, str]:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        proc = subprocess.run(["apt-get", *args], capture_output=True, text=True, env=env, check=False)
        output = proc.stdout + proc.stderr
        with open(self.log, "a") as log:
            log.write(f"$ apt-get {' '.join(args)}\n{output}\n(exit {proc.returncode})\n")
        return proc.returncode, output

    def install(self, package: str) -> None:
        if not self._updated:
            # a failed update (one unreachable third-party source) need not stop the install
            self._run("update", *self.OPTIONS)
            self._updated = True
        code, output = self._run("install", *self.OPTIONS, "--no-install-recommends", "--no-remove", package)
        if code != 0:
            raise SetupError(
                f"cannot install {package} ({_apt_reason(output, code)}); apt's output is in {self.log}; "
                f"to resolve it by hand, run: apt-get install --no-install-recommends {package}"
            )


def _apt_reason(output: str, code: int) -> str:
    """apt's failure in a few words: the pattern for the usual causes, else its last error line."""
    if "remove is disabled" in output or "broken packages" in output or "Conflicts:" in output:
        return "it conflicts with installed packages, which apt would have to remove"
    if "Unable to locate package" in output or "has no installation candidate" in output:
        return "no such package in the apt sources"
    if "Could not get lock" in output:
        return "another apt or dpkg is running"
    errors = [line for line in output.splitlines() if line.startswith("E: ")]
    return errors[-1][3:] if errors else f"apt-get exited with {code}"


def _is_root() -> bool:
    # `id -u` rather than os.geteuid(): the tests stand in an `id` to play a normal user
    proc = subprocess.run(["id", "-u"], capture_output=True, text=True, check=False)
    return proc.stdout.strip() == "0"


def requirements(needs: list[str]) -> list[Requirement]:
    unknown = [need for need in needs if need not in NEEDS]
    if unknown:
        raise SetupError(f"unknown need {', '.join(unknown)}; choose from {', '.join(NEEDS)}")
    return list(dict.fromkeys(req for need in needs for req in NEEDS[need]))


def ensure(needs: list[str]) -> list[str]:
    """Install what ``needs`` lack; return the packages installed. Raises SetupError when it cannot."""
    reqs = requirements(needs)
    missing = [req for req in reqs if not req.present()]
    if not missing:
        return []
    for req in missing:
        reason = req.blocker()
        if reason:
            raise SetupError(f"cannot install {req.package} for {req.what}: {reason}")
    packages = " ".join(dict.fromkeys(req.package for req in missing))
    if shutil.which("apt-get") is None:
        raise SetupError(
            f"cannot install {packages} (no apt-get here); install them with this system's package manager"
        )
    if not _is_root():
        raise SetupError(
            f"cannot install {packages} (not root); run: sudo apt-get install --no-install-recommends {packages}"
        )
    apt = Apt()
    installed: list[str] = []
    for req in reqs:
        if req.present():  # perhaps provided by a package installed for an earlier requirement
            continue
        reason = req.blocker()
        if reason:
            raise SetupError(f"cannot install {req.package} for {req.what}: {reason}")
        print(f"oya setup: installing {req.package} (for {req.what}) with apt-get", flush=True)
        apt.install(req.package)
        installed.append(req.package)
        if not req.present():
            raise SetupError(f"installed {req.package}, yet {req.what} is still missing; see {apt.log}")
    return installed


def main(argv: list[str]) -> int:
    try:
        ensure(argv)
    except SetupError as exc:
        print(f"oya setup: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
