"""Fixtures: real denocd processes on 127.0.0.1 and the in-process C++ core (through the denoc CLI).

The tests import the installed package (tests/run.sh installs it into a fresh virtual environment and runs
pytest from outside the source tree); nothing here puts the source directory on sys.path.

Environment (set by tests/run.sh and the ctest registration in tests/CMakeLists.txt):
- DENOCD: path of the denocd executable (required);
- DENOC_CLI: path of the `denoc` command-line tool, which computes with the C++ core in its own process
  (the oracle of the value tests);
- DENOC_MODELS_DIR: the robot files (default: the repository's examples/models).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
PACKAGE_ROOT = HERE.parent  # clients/python
REPO = PACKAGE_ROOT.parent.parent
MODELS = Path(os.environ.get("DENOC_MODELS_DIR", REPO / "examples" / "models"))
PANDA_HAND = MODELS / "panda_hand.urdf"
PANDA_TIP = "panda_hand_tcp"
RTOL = 1e-12  # relative tolerance of the client's answers against the core's (via the CLI)

# an idle gRPC client notices a server's GOAWAY at its backup poll (5 s by default), which a stopping denocd
# waits for (docs/service.md, Shutdown); poll often so that stopping a server in a test takes milliseconds
os.environ.setdefault("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50")


def _executable(var: str) -> str:
    path = os.environ.get(var)
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"set {var} to the executable (the ctest registration does); got {path!r}", pytrace=False)
    return path


class Server:
    """A denocd process on 127.0.0.1 with its own store directory."""

    def __init__(self, store_dir: Path, *args: str, port: int = 0):
        self.store_dir = Path(store_dir)
        self.records_dir = self.store_dir / "v1"  # the format's directory (docs/service.md, "Store")
        self.store_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="denocd-", dir=self.store_dir.parent))
        port_file = work / "port"
        self.log_path = work / "denocd.log"
        self._log = open(self.log_path, "wb")
        cmd = [_executable("DENOCD"), "--listen", f"127.0.0.1:{port}", "--port-file", str(port_file),
               "--store-dir", str(self.store_dir), "--shutdown-grace-ms", "0", "--drain-timeout-ms", "2000",
               *args]
        self.process = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30.0
        while not port_file.exists():
            if self.process.poll() is not None:
                self._log.close()
                raise RuntimeError(f"denocd exited with {self.process.returncode}: "
                                   f"{self.log_path.read_text(errors='replace')}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("denocd did not write its port file within 30 s")
            time.sleep(0.02)
        self.port = int(port_file.read_text().strip())
        self.target = f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self._log.close()


@pytest.fixture
def start_server(tmp_path):
    """A factory of servers, all stopped at the end of the test."""
    servers = []

    def start(*args: str, store: str = "store", port: int = 0) -> Server:
        server = Server(tmp_path / store, *args, port=port)
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One denocd (with the built-in example models) shared by a test module."""
    s = Server(tmp_path_factory.mktemp("server") / "store", "--max-states", "20000")
    yield s
    s.stop()


@pytest.fixture
def client(server):
    import denoc
    with denoc.Client(server.target, timeout=30) as c:
        yield c


def run_cli(command: str, model: Path, states: list, tmp_path: Path, *extra: str) -> list:
    """Runs `denoc COMMAND MODEL --states FILE --format json` (the core in the CLI's own process) and
    returns its per-state objects."""
    states_file = tmp_path / f"states-{command}.json"
    states_file.write_text(json.dumps(states))  # repr of doubles: exact round trip
    args = [_executable("DENOC_CLI"), command, str(model), "--states", str(states_file), "--format", "json",
            *extra]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["states"]


def close(actual, expected, what):
    """The arrays have the same shape and agree to RTOL relative to the largest expected value (at least 1)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, what
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    assert err <= RTOL * scale, f"{what}: max |error| {err:.3e} above {RTOL} x {scale:.3e}"
