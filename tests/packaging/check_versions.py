#!/usr/bin/python3
"""One version everywhere (ctest: packaging_versions). Reads project(denoc VERSION ...) from the top-level
CMakeLists.txt and compares every other place that states a version with it: denocd --version, denoc
--version, denocd's startup log line, the C++ client library's denoc::version() and the generated
denoc/version.hpp (through version_probe), the Python package (denoc/_version.py, which pyproject.toml takes
its version from), the Node package (package.json and its lock file), and the build's CPack and Debian
changelog files. Prints each; exit 1 when any differs.

Environment: DENOCD, DENOC_CLI, DENOC_VERSION_PROBE (executables), DENOC_BUILD_DIR (the build tree).
"""

import ast
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cmake_version() -> str:
    match = re.search(r"^project\(denoc VERSION (\d+\.\d+\.\d+)\b", (REPO / "CMakeLists.txt").read_text(), re.M)
    if not match:
        sys.exit("check_versions: no project(denoc VERSION x.y.z) in CMakeLists.txt")
    return match.group(1)


def output(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout.strip()


def startup_line(denocd: str) -> str:
    """The first log line of a denocd started on 127.0.0.1 (port 0) and stopped again."""
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp, "port")
        with open(Path(tmp, "log"), "wb") as log:
            server = subprocess.Popen([denocd, "--listen", "127.0.0.1:0", "--port-file", str(port_file),
                                       "--store-dir", str(Path(tmp, "store")), "--shutdown-grace-ms", "0"],
                                      stdout=log, stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + 30
                while not port_file.exists() and server.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.02)
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=30)
        lines = Path(tmp, "log").read_text().splitlines()
        return lines[0] if lines else ""


def python_version() -> str:
    tree = ast.parse((REPO / "clients/python/denoc/_version.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "__version__":
            return node.value.value
    return ""


def main() -> int:
    want = cmake_version()
    build = Path(os.environ["DENOC_BUILD_DIR"])
    pyproject = (REPO / "clients/python/pyproject.toml").read_text()
    package = json.loads((REPO / "clients/node/package.json").read_text())
    lock = json.loads((REPO / "clients/node/package-lock.json").read_text())
    cpack = re.search(r'set\(CPACK_PACKAGE_VERSION "([^"]*)"\)', (build / "CPackConfig.cmake").read_text())
    changelog = (build / "debian/changelog").read_text().splitlines()[0]
    line = startup_line(os.environ["DENOCD"])
    found = {
        "denocd --version": output(os.environ["DENOCD"], "--version"),
        "denoc --version": output(os.environ["DENOC_CLI"], "--version"),
        "denocd startup line": re.sub(r"^.*\] (denocd \S+) starting.*$", r"\1", line),
        "denoc::version() and denoc/version.hpp": output(os.environ["DENOC_VERSION_PROBE"]),
        "Python denoc.__version__ (denoc/_version.py)": python_version(),
        "Node package.json": package.get("version", ""),
        "Node package-lock.json": f'{lock.get("version", "")} {lock["packages"][""].get("version", "")}',
        "CPack (Debian package)": cpack.group(1) if cpack else "",
        "Debian changelog": changelog,
    }
    expected = {
        "denocd --version": f"denocd {want}",
        "denoc --version": f"denoc {want}",
        "denocd startup line": f"denocd {want}",
        "denoc::version() and denoc/version.hpp": f"{want} {want}",
        "Python denoc.__version__ (denoc/_version.py)": want,
        "Node package.json": want,
        "Node package-lock.json": f"{want} {want}",
        "CPack (Debian package)": want,
        "Debian changelog": f"denoc ({want}) unstable; urgency=medium",
    }
    bad = 0
    print(f"CMakeLists.txt: {want}")
    for what, value in found.items():
        ok = value == expected[what]
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {value!r}" + ("" if ok else f", expected {expected[what]!r}"))
    # pyproject.toml takes the version from denoc/_version.py, and nowhere states one of its own
    if 'version = {attr = "denoc._version.__version__"}' not in pyproject or re.search(r"^version\s*=\s*\"",
                                                                                       pyproject, re.M):
        print("FAIL pyproject.toml: the version must come from denoc._version.__version__")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
