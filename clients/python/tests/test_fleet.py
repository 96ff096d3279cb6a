"""The fleet scenario of tests/front/test_fleet_client.cpp with the Python client.

Three denocd replicas sharing one store, each behind its own front, and the L7 balancer over them (fleet.py),
all real processes; skipped without Debian's nginx. A model registered through the balancer is listed by every
replica (asked on its socket); deleted on one, every replica answers NOT_FOUND "was deleted"; registrations
racing deletions on other replicas leave every replica's listing equal to the store directory. A client
calling inverse dynamics throughout (each answer checked against the denoc tool's, the core in its own
process) has no failed call while a replica is killed and started again (the client's retries: the attempts
the killed replica's front refused, 502 in its access log); a replica added to a balancer gets calls after the
reload; calls spread over the three replicas. The figures are printed.
"""
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import denoc
from conftest import PANDA_HAND, PANDA_TIP, close, run_cli
from fleet import NGINX, REPLICAS, Fleet

pytestmark = pytest.mark.skipif(not NGINX.exists(), reason=f"{NGINX} not found")
PANDA = PANDA_HAND.read_text()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    f = Fleet(tmp_path_factory.mktemp("fleet"))
    yield f
    f.stop()


@pytest.fixture
def report(capsys):
    """Prints a line of figures past pytest's capture (as test_throughput does)."""
    def out(line: str) -> None:
        with capsys.disabled():
            print(f"\n{line}")
    return out


def _listed(fleet: Fleet, r: int) -> list:
    with fleet.direct(r) as c:
        return sorted(m.model_id for m in c.list_models() if not m.pinned)


def _on_disk(fleet: Fleet) -> list:
    return sorted(p.name[:64] for p in (fleet.store / "v1").iterdir() if re.fullmatch(r"[0-9a-f]{64}\.pb", p.name))


def _eventually(cond, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


class Caller:
    """A client calling inverse dynamics on the Panda every 5 ms until stopped, each answer checked against the
    CLI's."""

    def __init__(self, client: denoc.Client, tmp_path):
        self.client = client
        self.model = client.register_urdf(PANDA, tip_link=PANDA_TIP)
        n = self.model.dof
        rng = np.random.default_rng(7)
        self.states = [tuple(rng.uniform(-1, 1, n) for _ in range(3)) for _ in range(16)]
        cli = [{"q": list(q), "qd": list(qd), "qdd": list(qdd)} for q, qd, qdd in self.states]
        self.tau = [s["tau"] for s in run_cli("id", PANDA_HAND, cli, tmp_path, "--tip-link", PANDA_TIP)]
        self.calls = self.failed = self.wrong = 0
        self.slowest_ms = 0.0
        self.first_failure = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        k = 0
        while not self._done.is_set():
            q, qd, qdd = self.states[k % len(self.states)]
            t0 = time.monotonic()
            try:
                tau = self.client.inverse_dynamics(self.model, q, qd, qdd)
                try:
                    close(tau, self.tau[k % len(self.states)], "tau")
                except AssertionError:
                    self.wrong += 1
            except denoc.DenocError as e:
                if self.failed == 0:
                    self.first_failure = repr(e)
                self.failed += 1
            self.slowest_ms = max(self.slowest_ms, 1e3 * (time.monotonic() - t0))
            self.calls += 1
            k += 1
            time.sleep(0.005)


def test_every_replica_sees_the_registration_the_deletion_and_the_store_after_races(report, fleet):
    replicas = [fleet.direct(r) for r in range(REPLICAS)]
    with fleet.robot(fleet.balancer_port) as robot:
        model_id = robot.register_urdf(PANDA, tip_link="panda_link3").model_id
        for r in range(REPLICAS):
            assert model_id in _listed(fleet, r), f"replica {r}"

        # deleted on replica 0: every replica answers NOT_FOUND "was deleted"
        deleted = time.monotonic()
        replicas[0].delete_model(model_id)
        seen = 0.0
        for r in range(REPLICAS):
            message = []

            def gone() -> bool:
                try:
                    replicas[r].get_model(model_id)
                    return False
                except denoc.NotFoundError as e:
                    message.append(str(e))
                    return True
            assert _eventually(gone), f"replica {r} still serves the deleted model"
            seen = max(seen, time.monotonic() - deleted)
            assert denoc.errors.was_deleted(message[-1]), f"replica {r}: {message[-1]}"
        report(f"[ figures  ] Python client: a deletion on one replica was seen by all three after {seen:.3f} s")

        # a registration on one replica racing a deletion on another, round after round
        rounds = 30
        tips = ["panda_link4", "panda_link5", "panda_link6", "panda_link7"]

        def delete(client: denoc.Client, mid: str) -> None:
            try:
                client.delete_model(mid)
            except denoc.NotFoundError:
                pass  # deleted in an earlier round

        with ThreadPoolExecutor(2) as pool:
            for i in range(rounds):
                tip = tips[i % len(tips)]
                mid = robot.register_urdf(PANDA, tip_link=tip).model_id
                racing = [pool.submit(replicas[i % REPLICAS].register_urdf, PANDA, tip_link=tip),
                          pool.submit(delete, replicas[(i + 1) % REPLICAS], mid)]
                for f in racing:
                    f.result()
    raced = time.monotonic()
    disk = _on_disk(fleet)
    for r in range(REPLICAS):
        assert _eventually(lambda: _listed(fleet, r) == disk), f"replica {r}"
    report(f"[ figures  ] Python client: after {rounds} rounds of a registration racing a deletion, every replica "
           f"listed the store's {len(disk)} models within {time.monotonic() - raced:.3f} s")
    for c in replicas:
        c.close()


def test_no_call_fails_while_a_replica_is_killed_and_started_again(report, fleet, tmp_path):
    with fleet.robot(fleet.balancer_port) as robot:
        caller = Caller(robot, tmp_path)
        try:
            time.sleep(1.0)
            refused_before = sum(" 502 " in line for line in fleet.access_log(1))
            killed = time.monotonic()
            fleet.kill_replica(1)
            time.sleep(0.5)
            fleet.start_replica(1)
            down = time.monotonic() - killed
            back = time.monotonic()
            first_call = fleet.seconds_until_called(1, fleet.per_replica()[1], back)
            time.sleep(1.0)
        finally:
            caller.stop()
    refused = sum(" 502 " in line for line in fleet.access_log(1)) - refused_before
    report(f"[ figures  ] Python client: {caller.calls} calls, replica 1 down {down:.2f} s, {refused} attempts its "
           f"front refused (502, each retried unless a call failed), {caller.failed} failed, {caller.wrong} wrong, "
           f"slowest {caller.slowest_ms:.0f} ms; the restarted replica's first call {first_call:.2f} s after it "
           "was back")
    assert caller.failed == 0, caller.first_failure
    assert caller.wrong == 0
    assert first_call >= 0, "the restarted replica got no call within 30 s"


def test_a_replica_added_to_a_balancer_gets_calls_without_a_failed_call(report, fleet, tmp_path):
    port = fleet.start_balancer("scaled", 2)
    with fleet.robot(port) as robot:
        caller = Caller(robot, tmp_path)
        try:
            time.sleep(0.5)
            on2 = fleet.per_replica()[2]
            reloaded = fleet.scale_balancer("scaled", port, 3)
            first_call = fleet.seconds_until_called(2, on2, reloaded)
            time.sleep(1.0)
        finally:
            caller.stop()
    report(f"[ figures  ] Python client: the third replica's first call {first_call:.2f} s after the balancer's "
           f"reload; {caller.calls} calls, {caller.failed} failed")
    assert first_call >= 0, "the added replica got no call within 30 s"
    assert caller.failed == 0, caller.first_failure
    assert caller.wrong == 0


def test_calls_spread_over_every_replica(report, fleet):
    q = np.full(3, 0.2)
    with fleet.robot(fleet.balancer_port) as robot:
        arm = robot.find_model("planar_3r")
        robot.inverse_dynamics(arm, q)
        before = fleet.settled_per_replica()
        calls = 90
        for _ in range(calls):
            robot.inverse_dynamics(arm, q)
        spread = [n - b for n, b in zip(fleet.settled_per_replica(), before)]
    report(f"[ figures  ] Python client: {calls} calls through the balancer: "
           f"{', '.join(map(str, spread))} on replicas 0, 1, 2")
    assert sum(spread) == calls, spread
    assert all(n >= calls / 5 for n in spread), spread
