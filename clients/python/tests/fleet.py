"""A fleet behind the L7 balancer (as tests/front/fleet_process.hpp for C++), all real processes.

Three denocd replicas sharing one store, each on a unix socket behind its own front (deploy/nginx/denoc.conf),
and the balancer (deploy/nginx/balancer.conf) over the fronts: nginx configured by deploy/nginx/render.sh and
run by deploy/nginx/front.sh, with certificates made by deploy/gen-certs.sh. Every process is killed with
the fleet.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import denoc
from conftest import REPO, _executable

NGINX = Path("/usr/sbin/nginx")  # Debian's nginx: the fleet tests are skipped without it
REPLICAS = 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list, log: Path, env=None) -> subprocess.Popen:
    """A process in a session of its own (nginx's master and workers die with it)."""
    with open(log, "ab") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _kill(p: subprocess.Popen | None) -> None:
    if p is not None and p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=30)


def _ready(client: denoc.Client, what: str) -> None:
    with client:
        try:
            client.wait_ready(timeout=30)
        except denoc.UnavailableError as e:
            raise RuntimeError(f"{what} does not answer: {e}") from None


class Fleet:
    def __init__(self, directory: Path):
        self.dir = Path(directory)
        self.store = self.dir / "store"
        self.certs = self.dir / "certs"
        self.front_ports: list[int] = []
        self._replicas: dict[int, subprocess.Popen] = {}
        self._fronts: dict[str, subprocess.Popen] = {}
        try:
            subprocess.run(["bash", str(REPO / "deploy" / "gen-certs.sh"), str(self.certs)], check=True,
                           capture_output=True)
            for r in range(REPLICAS):
                self.start_replica(r)
                self.front_ports.append(_free_port())
                self._front(f"replica{r}-front", self.front_ports[r], ["--socket", str(self.socket(r))])
            self.balancer_port = self.start_balancer("balancer", REPLICAS)
        except BaseException:
            self.stop()
            raise

    def socket(self, r: int) -> Path:
        return self.dir / f"replica{r}.sock"

    def robot(self, port: int, **kwargs) -> denoc.Client:
        """A robot's client through a front or balancer on ``port``: mutual TLS with the client certificate."""
        return denoc.Client(f"127.0.0.1:{port}", root_certificates=self.certs / "ca.crt",
                            certificate_chain=self.certs / "client.crt", private_key=self.certs / "client.key",
                            server_name="localhost", **kwargs)

    def direct(self, r: int) -> denoc.Client:
        """A client of replica r alone, on its socket (not through a front)."""
        return denoc.Client(f"unix:{self.socket(r)}", timeout=30)

    def start_replica(self, r: int) -> None:
        """Starts denocd r on its socket (again after kill_replica: the same socket and store)."""
        self._replicas[r] = _start(
            [_executable("DENOCD"), "--listen", f"unix:{self.socket(r)}", "--trusted-front-header", "--store-dir",
             str(self.store), "--shutdown-grace-ms", "0"], self.dir / f"replica{r}.log")
        _ready(self.direct(r), f"replica {r}")

    def kill_replica(self, r: int) -> None:
        """Kills denocd r with SIGKILL (its front stays)."""
        _kill(self._replicas.pop(r, None))

    def start_balancer(self, prefix: str, replicas: int) -> int:
        """A balancer named ``prefix`` over the first ``replicas`` fronts on a free port (returned)."""
        port = _free_port()
        self._front(prefix, port, self._balancer_args(replicas))
        return port

    def scale_balancer(self, prefix: str, port: int, replicas: int) -> float:
        """Renders balancer ``prefix`` anew over the first ``replicas`` fronts and reloads it (SIGHUP to
        front.sh, which passes it to nginx); returns the time of the reload (time.monotonic())."""
        self._render(prefix, port, self._balancer_args(replicas))
        reloaded = time.monotonic()
        self._fronts[prefix].send_signal(signal.SIGHUP)
        return reloaded

    def access_log(self, r: int) -> list[str]:
        log = self.dir / f"replica{r}-front" / "access.log"
        return [line for line in log.read_text().splitlines() if line] if log.exists() else []

    def per_replica(self) -> list[int]:
        """The calls each replica's front has passed on so far (the lines of its access log)."""
        return [len(self.access_log(r)) for r in range(REPLICAS)]

    def settled_per_replica(self) -> list[int]:
        """per_replica() once it stays the same for 200 ms (at most 5 s): nginx writes a call's line when it
        ended, after the client may have had its answer."""
        n = self.per_replica()
        for _ in range(25):
            time.sleep(0.2)
            again = self.per_replica()
            if again == n:
                break
            n = again
        return n

    def seconds_until_called(self, r: int, before: int, since: float, timeout: float = 30.0) -> float:
        """Seconds from ``since`` until replica r's front logged more than ``before`` calls, or -1."""
        while time.monotonic() - since < timeout:
            if self.per_replica()[r] > before:
                return time.monotonic() - since
            time.sleep(0.02)
        return -1.0

    def stop(self) -> None:
        for p in reversed(list(self._fronts.values())):
            _kill(p)
        for p in self._replicas.values():
            _kill(p)

    def _balancer_args(self, replicas: int) -> list:
        args = ["--site", "balancer", "--upstream-name", "localhost", "--balancer-cert",
                str(self.certs / "balancer.crt"), "--balancer-key", str(self.certs / "balancer.key")]
        for p in self.front_ports[:replicas]:
            args += ["--upstream", f"127.0.0.1:{p}"]
        return args

    def _render(self, prefix: str, port: int, args: list) -> None:
        prefix_dir = self.dir / prefix
        subprocess.run(
            ["bash", str(REPO / "deploy" / "nginx" / "render.sh"), str(prefix_dir), "--listen", f"127.0.0.1:{port}",
             "--cert", str(self.certs / "tls.crt"), "--key", str(self.certs / "tls.key"), "--client-ca",
             str(self.certs / "ca.crt"), *args, "--workers", "1", "--access-log", str(prefix_dir / "access.log"),
             *(["--user", "root"] if os.geteuid() == 0 else [])], check=True, capture_output=True)

    def _front(self, prefix: str, port: int, args: list) -> None:
        """A front (or a balancer) ``prefix`` on ``port``, rendered with ``args`` and run by front.sh."""
        self._render(prefix, port, args)
        env = dict(os.environ, PATH=f"{NGINX.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                   DENOC_FRONT_PREFIX=f"{self.dir / prefix}/", DENOC_FRONT_CONF="nginx.conf",
                   DENOC_FRONT_WATCH=str(self.certs / "tls.crt"), DENOC_FRONT_RELOAD_S="1")
        self._fronts[prefix] = _start(["/bin/sh", str(REPO / "deploy" / "nginx" / "front.sh")],
                                      self.dir / f"{prefix}.log", env)
        _ready(self.robot(port), prefix)
