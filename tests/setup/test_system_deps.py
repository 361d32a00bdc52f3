"""The set-up installer (oya/system_deps.py) against a stand-in Debian: a PATH holding only fake
commands (apt-get, dpkg-query, id, ldconfig, and the programs the packages provide), so each
machine situation of issue 10 is played out for real by the installer's own process.

The fake apt-get records every call and "installs" a package by putting the commands it provides
on that PATH (and telling the fake dpkg-query who owns them), so a test sees both what apt was
asked for and whether the installer re-checked the result.

Manual check on a real fresh Debian 12 (it downloads from Debian, PyPI and npm, so it is not a
test): see tests/setup/fresh_debian_check.sh and its result in the README's Set-up section.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

# Debian package -> the commands (or "lib:" shared libraries) it provides, as apt would install them.
DEBIAN = {
    "nodejs": ["node"],
    "npm": ["npm"],
    "chromium": ["chromium"],
    "g++": ["c++"],
    "libgomp1": ["lib:libgomp.so.1"],
}
DEBIAN_NODEJS = "18.19.0+dfsg-6~deb12u2\tnodejs-abi-108\tnodejs-legacy"
NODESOURCE_NODEJS = "20.20.2-1nodesource1\tnodejs-dev, nodejs-legacy, npm\tnodejs-dev, nodejs-legacy, npm"
APT_CONFLICT = """Reading package lists...
Some packages could not be installed. This may mean that you have
requested an impossible situation.
The following packages have unmet dependencies:
 nodejs : Conflicts: npm
E: Unable to correct problems, you have held broken packages.
"""


@dataclass
class FakeDebian:
    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def apt_log(self) -> Path:
        return self.root / "apt-calls"

    def script(self, name: str, body: str) -> None:
        path = self.bin / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)

    def command(self, name: str, package: str | None = None, status: str = "") -> None:
        """A program on PATH; with ``package``, dpkg says that package owns it (and what it is)."""
        self.script(name, "exit 0\n")
        if package:
            with open(self.root / "owners", "a") as owners:
                owners.write(f"{self.bin / name}\t{package}\n")
            if status:
                (self.root / "status" / package).write_text(status)

    def library(self, soname: str) -> None:
        with open(self.root / "ldconfig", "a") as libs:
            libs.write(f"\t{soname} (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/{soname}\n")

    def apt_calls(self) -> list[str]:
        return self.apt_log.read_text().splitlines() if self.apt_log.exists() else []

    def installed(self) -> list[str]:
        return [call.split()[-1] for call in self.apt_calls() if call.startswith("install ")]


def _apt_get_script(fake: FakeDebian, extra: dict[str, list[str]], failing: dict[str, str]) -> str:
    """A fake apt-get: record the call, then install the last argument as DEBIAN (+ extra) says."""
    cases = []
    for package, output in failing.items():
        if package == "update":
            continue
        (fake.root / f"apt-out-{package}").write_text(output)
        cases.append(f'  {package}) /bin/cat "{fake.root}/apt-out-{package}"; exit 100 ;;')
    for package, provides in {**DEBIAN, **extra}.items():
        steps = []
        for item in provides:
            if item.startswith("lib:"):
                lib = item[4:]
                steps.append(
                    f"printf '\\t{lib} (libc6,x86-64) => /usr/lib/{lib}\\n' >> \"{fake.root}/ldconfig\""
                )
            else:
                target = fake.bin / item
                steps.append(f"printf '#!/bin/sh\\nexit 0\\n' > {target}; /bin/chmod +x {target}")
                steps.append(f"printf '{target}\\t{package}\\n' >> \"{fake.root}/owners\"")
        if package == "nodejs":
            steps.append(f"printf '{DEBIAN_NODEJS}' > \"{fake.root}/status/nodejs\"")
        cases.append(f"  {package}) {'; '.join(steps)} ;;")
    return f"""echo "$*" >> "{fake.apt_log}"
[ "$1" = update ] && exit {100 if "update" in failing else 0}
for last; do :; done
case "$last" in
{chr(10).join(cases)}
  *) echo "E: Unable to locate package $last"; exit 100 ;;
esac
exit 0
"""


@pytest.fixture
def fake(tmp_path: Path) -> FakeDebian:
    debian = FakeDebian(tmp_path)
    debian.bin.mkdir()
    (tmp_path / "status").mkdir()
    (tmp_path / "owners").touch()
    (tmp_path / "ldconfig").touch()
    debian.script("ldconfig", f'/bin/cat "{tmp_path}/ldconfig"\n')
    debian.script(
        "dpkg-query",
        f"""if [ "$1" = -S ]; then
  while IFS="$(printf '\\t')" read -r path package; do
    [ "$path" = "$2" ] && {{ echo "$package: $path"; exit 0; }}
  done < "{tmp_path}/owners"
  echo "dpkg-query: no path found matching pattern $2" >&2; exit 1
fi
[ "$1" = -W ] && [ -f "{tmp_path}/status/$3" ] && {{ /bin/cat "{tmp_path}/status/$3"; exit 0; }}
exit 1
""",
    )
    return debian


def run_setup(
    fake: FakeDebian,
    *needs: str,
    uid: int = 0,
    apt: bool = True,
    apt_extra: dict[str, list[str]] | None = None,
    apt_failing: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    fake.script("id", f"echo {uid}\n")
    if apt:
        fake.script("apt-get", _apt_get_script(fake, apt_extra or {}, apt_failing or {}))
    environ = {
        "PATH": str(fake.bin),
        "HOME": str(fake.root),
        "TMPDIR": str(fake.root),
        **(env or {}),
    }
    # -S: no site-packages, as with the system python3 that runs it before the virtualenv exists
    return subprocess.run(
        [sys.executable, "-S", "-m", "oya.system_deps", *needs],
        cwd=REPO_ROOT,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def nodesource(fake: FakeDebian) -> None:
    """Node.js from NodeSource: npm is inside the nodejs package, which conflicts with Debian's npm."""
    fake.command("node", "nodejs", NODESOURCE_NODEJS)
    fake.command("npm", "nodejs")


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("oya setup: cannot install ")
    return lines[0]


def test_all_present_installs_nothing_and_needs_no_root(fake: FakeDebian) -> None:
    nodesource(fake)
    fake.command("chromium", "chromium")
    fake.command("c++", "g++")
    fake.library("libgomp.so.1")
    proc = run_setup(fake, "venv", "node", "chromium", "cxx", "libgomp", uid=1000)
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == ("", "")
    assert fake.apt_calls() == []


def test_nodesource_node_without_chromium_installs_only_chromium(fake: FakeDebian) -> None:
    nodesource(fake)
    proc = run_setup(fake, "node", "chromium")
    assert proc.returncode == 0, proc.stderr
    calls = fake.apt_calls()
    assert [call.split()[0] for call in calls] == ["update", "install"]
    assert calls[1].endswith(" --no-install-recommends --no-remove chromium")
    assert not any("npm" in call or "nodejs" in call for call in calls)
    assert "installing chromium" in proc.stdout


def test_run_needs_no_browser(fake: FakeDebian) -> None:
    nodesource(fake)
    proc = run_setup(fake, "node", uid=1000)
    assert proc.returncode == 0, proc.stderr
    assert fake.apt_calls() == []


def test_nothing_present_installs_each_package_alone_after_one_update(fake: FakeDebian) -> None:
    proc = run_setup(fake, "node", "chromium", "cxx", "libgomp")
    assert proc.returncode == 0, proc.stderr
    assert [call.split()[0] for call in fake.apt_calls()].count("update") == 1
    assert fake.apt_calls()[0].startswith("update")
    assert fake.installed() == ["nodejs", "npm", "chromium", "g++", "libgomp1"]
    for call in fake.apt_calls()[1:]:
        assert call.split()[-2:-1] == ["--no-remove"]  # exactly one package, and apt may remove nothing


def test_a_package_that_brings_a_later_requirement_is_not_followed_by_it(fake: FakeDebian) -> None:
    # apt sources already point at NodeSource: its nodejs brings npm, so Debian's npm is never asked for
    proc = run_setup(fake, "node", apt_extra={"nodejs": ["node", "npm"]})
    assert proc.returncode == 0, proc.stderr
    assert fake.installed() == ["nodejs"]


def test_a_failed_update_does_not_stop_the_install(fake: FakeDebian) -> None:
    # one unreachable third-party source makes `apt-get update` fail; Debian's lists may still be fine
    proc = run_setup(
        fake, "libgomp", apt_failing={"update": "E: The repository ... does not have a Release file."}
    )
    assert proc.returncode == 0, proc.stderr
    assert fake.installed() == ["libgomp1"]


def test_chromium_under_another_name_is_used(fake: FakeDebian) -> None:
    nodesource(fake)
    fake.command("google-chrome")
    proc = run_setup(fake, "node", "chromium", uid=1000)
    assert proc.returncode == 0, proc.stderr
    assert fake.apt_calls() == []


def test_oya_chromium_points_outside_path(fake: FakeDebian, tmp_path: Path) -> None:
    browser = tmp_path / "opt" / "chrome"
    browser.parent.mkdir()
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    proc = run_setup(fake, "chromium", uid=1000, env={"OYA_CHROMIUM": str(browser)})
    assert proc.returncode == 0, proc.stderr
    bad = run_setup(fake, "chromium", env={"OYA_CHROMIUM": str(tmp_path / "nowhere")})
    assert bad.returncode == 1
    assert "OYA_CHROMIUM=" in one_line(bad) and "not an executable" in bad.stderr
    assert fake.apt_calls() == []


def test_not_root_names_the_packages_and_the_command(fake: FakeDebian) -> None:
    nodesource(fake)
    proc = run_setup(fake, "node", "chromium", "libgomp", uid=1000)
    assert proc.returncode == 1
    assert one_line(proc) == (
        "oya setup: cannot install chromium libgomp1 (not root); "
        "run: sudo apt-get install --no-install-recommends chromium libgomp1"
    )
    assert fake.apt_calls() == []


def test_no_apt_get(fake: FakeDebian) -> None:
    proc = run_setup(fake, "chromium", apt=False)
    assert proc.returncode == 1
    assert "chromium (no apt-get here)" in one_line(proc)


def test_apt_conflict_is_one_line_and_apt_output_goes_to_the_log(fake: FakeDebian) -> None:
    fake.command("node")
    fake.command("npm")
    proc = run_setup(fake, "node", "chromium", apt_failing={"chromium": APT_CONFLICT})
    assert proc.returncode == 1
    line = one_line(proc)
    assert line.startswith("oya setup: cannot install chromium (it conflicts with installed packages")
    assert line.endswith("to resolve it by hand, run: apt-get install --no-install-recommends chromium")
    assert "unmet dependencies" not in proc.stdout + proc.stderr
    log = Path(line.split("apt's output is in ")[1].split(";")[0])
    assert "held broken packages" in log.read_text()


def test_nodesource_node_with_npm_missing_never_asks_apt_for_npm(fake: FakeDebian) -> None:
    fake.command("node", "nodejs", NODESOURCE_NODEJS)
    proc = run_setup(fake, "node")
    assert proc.returncode == 1
    assert "bundles npm" in one_line(proc) and "--reinstall nodejs" in proc.stderr
    assert fake.apt_calls() == []


def test_node_from_outside_dpkg_with_npm_missing(fake: FakeDebian) -> None:
    fake.command("node")  # e.g. a tarball or nvm: no Debian package owns it
    proc = run_setup(fake, "node")
    assert proc.returncode == 1
    assert "not from a Debian package" in one_line(proc)
    assert fake.apt_calls() == []


def test_installed_package_that_does_not_provide_is_reported(fake: FakeDebian) -> None:
    proc = run_setup(fake, "chromium", apt_extra={"chromium": []})
    assert proc.returncode == 1
    assert "installed chromium, yet chromium is still missing" in proc.stderr


def test_unknown_need(fake: FakeDebian) -> None:
    proc = run_setup(fake, "browser")
    assert proc.returncode == 1
    assert "unknown need browser; choose from venv, node, chromium" in proc.stderr


def _make_dry_run(target: str) -> list[str]:
    """The installer's needs in ``make -n TARGET``, in order (nothing is built or installed)."""
    out = subprocess.run(
        ["make", "-n", "-C", str(REPO_ROOT), target, "VENV=/nonexistent-venv", "PYTHON=python3"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MAKEFLAGS": ""},
    ).stdout
    return [
        line.split("oya.system_deps", 1)[1].strip() for line in out.splitlines() if "oya.system_deps" in line
    ]


def test_make_run_needs_no_browser_and_make_test_does() -> None:
    assert _make_dry_run("run")[0] == "node"
    assert not any("chromium" in needs for needs in _make_dry_run("run"))
    assert _make_dry_run("test")[0] == "node chromium"
