"""What a planner needs from the client against real denocd processes: a payload on the inverse-dynamics,
forward-dynamics and full-factor batches (equal to the calls without it on a second model whose last link
carries the payload, merged by hand with the parallel-axis theorem), and Kinematics, Derivatives and Rollout
split above the server's --max-states (equal to the same batches against a server without the limit; the
number of calls read from the limited server's metrics), and a client that kept a larger max_states than the
server now serving its address (a rolling upgrade): the batch refused with RESOURCE_EXHAUSTED naming max_states
is split anew after one GetServerInfo, read from that server's metrics."""

import copy
import json
import time
import urllib.request

import numpy as np
import pytest

import denoc
from conftest import MODELS, PANDA_HAND, PANDA_TIP, close

TOOL = denoc.Payload(mass=1.3, com=(0.03, -0.02, 0.09),
                     inertia=[[0.004, 0.0003, -0.0002], [0.0003, 0.005, 0.0001], [-0.0002, 0.0001, 0.003]])


def with_tool_by_hand(doc: dict) -> dict:
    """The denoc-dh/1 document with TOOL merged into its last link: the combined mass, mass centre and inertia
    about the combined centre (parallel-axis theorem; both bodies in frame n+1, the tip frame)."""
    doc = copy.deepcopy(doc)
    last = doc["links"][-1]
    m1, c1 = float(last["mass"]), np.array(last["com"], dtype=float)
    i1 = np.diag(last["inertia"]["principal"]) if "principal" in last["inertia"] else np.array(
        [[last["inertia"][a + b] if a + b in last["inertia"] else last["inertia"][b + a] for b in "xyz"]
         for a in "xyz"], dtype=float)
    m2, c2, i2 = TOOL.mass, np.array(TOOL.com), np.array(TOOL.inertia)
    m = m1 + m2
    c = (m1 * c1 + m2 * c2) / m

    def shift(mass, d):
        return mass * (d @ d * np.eye(3) - np.outer(d, d))

    i = i1 + shift(m1, c1 - c) + i2 + shift(m2, c2 - c)
    last["mass"], last["com"] = m, list(c)
    last["inertia"] = {"ixx": i[0, 0], "ixy": i[0, 1], "ixz": i[0, 2], "iyy": i[1, 1], "iyz": i[1, 2],
                       "izz": i[2, 2]}
    doc["name"] = doc["name"] + " with the tool"
    return doc


def near(actual, expected, what, rtol=1e-9):
    """Element by element within rtol relative (absolute below 1)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, what
    bad = np.abs(actual - expected) > rtol * np.maximum(1.0, np.abs(expected))
    assert not bad.any(), f"{what}: {np.count_nonzero(bad)} entries differ, first at {np.argwhere(bad)[0]}"


def differs(a, b):
    return bool(np.any(np.abs(np.asarray(a) - np.asarray(b)) > 1e-6 * np.maximum(1.0, np.abs(np.asarray(b)))))


def test_dynamics_batches_with_a_payload_equal_the_model_with_it_merged_by_hand(start_server):
    server = start_server("--max-states", "4")  # the payload must travel with every part of a split batch
    doc = json.loads((MODELS / "stanford_arm.json").read_text())
    rng = np.random.default_rng(21)
    count = 9
    with denoc.Client(server.target) as c:
        plain, heavy = c.register_dh(doc), c.register_dh(with_tool_by_hand(doc))
        assert plain.model_id != heavy.model_id
        n = plain.dof
        q, qd = rng.uniform(-1.5, 1.5, (count, n)), rng.uniform(-1, 1, (count, n))
        qdd, tau = rng.uniform(-3, 3, (count, n)), rng.uniform(-10, 10, (count, n))
        wrench = rng.uniform(-2, 2, (count, 6))

        got = c.inverse_dynamics(plain, q, qd, qdd, payload=TOOL)
        near(got, c.inverse_dynamics(heavy, q, qd, qdd), "inverse dynamics")
        assert differs(got, c.inverse_dynamics(plain, q, qd, qdd))
        near(c.inverse_dynamics(plain, q, qd, qdd, tip_wrench=wrench, payload=TOOL),
             c.inverse_dynamics(heavy, q, qd, qdd, tip_wrench=wrench), "inverse dynamics with wrenches")
        # a dict is a payload too
        near(c.inverse_dynamics(plain, q[0], qd[0], qdd[0], payload={"mass": TOOL.mass, "com": TOOL.com,
                                                                     "inertia": TOOL.inertia}),
             c.inverse_dynamics(heavy, q[0], qd[0], qdd[0]), "one state")

        for route in ("saha", "fixman", "cholesky"):
            got = c.forward_dynamics(plain, q, qd, tau, route=route, payload=TOOL)
            near(got, c.forward_dynamics(heavy, q, qd, tau, route=route), f"forward dynamics {route}")
            assert differs(got, c.forward_dynamics(plain, q, qd, tau, route=route))

        flags = dict(convective=True, bias=True, gravity_torque=True, inverse=True)
        f = c.full_factor(plain, q, qd, payload=TOOL, **flags)
        want = c.full_factor(heavy, q, qd, **flags)
        without = c.full_factor(plain, q, qd, **flags)
        for name in ("inertia", "u", "d", "log_det", "convective", "bias", "gravity_torque", "inverse"):
            near(getattr(f, name), getattr(want, name), f"full factor {name}")
        assert differs(f.inertia, without.inertia) and differs(f.gravity_torque, without.gravity_torque)


def _metrics(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            out[series] = float(value)
    return out


def _metrics_port(port_file) -> int:
    """The port a denocd wrote to its --metrics-port-file (waited for at most 10 s)."""
    deadline = time.monotonic() + 10
    while not (port_file.exists() and port_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    return int(port_file.read_text())


def _calls(port: int, rpc: str, code: str = "OK") -> float:
    """denoc_requests_total{code, rpc} of the server with this metrics port."""
    return _metrics(port).get(f'denoc_requests_total{{code="{code}",rpc="{rpc}"}}', 0)


@pytest.fixture
def servers(start_server, tmp_path):
    """(limited, port of its metrics, unlimited): --max-states 10 against the default limit."""
    port_file = tmp_path / "metrics.port"
    limited = start_server("--max-states", "10", "--metrics-listen", "127.0.0.1:0", "--metrics-port-file",
                           str(port_file), store="limited")
    whole = start_server(store="whole")
    return limited, _metrics_port(port_file), whole


def test_planning_batches_above_max_states_are_split_and_joined_in_order(servers):
    limited, port, whole = servers

    def calls(rpc, code="OK"):
        return _calls(port, rpc, code)

    rng = np.random.default_rng(22)
    with denoc.Client(limited.target) as small, denoc.Client(whole.target) as big:
        pid = small.register_urdf(PANDA_HAND, tip_link=PANDA_TIP).model_id
        assert big.register_urdf(PANDA_HAND, tip_link=PANDA_TIP).model_id == pid
        assert small.max_states() == 10 and big.max_states() > 1000
        n = 7

        count = 37  # 10 + 10 + 10 + 7
        q, qd = rng.uniform(-1.5, 1.5, (count, n)), rng.uniform(-1, 1, (count, n))
        args = dict(link="panda_link7", point=(0.01, 0.02, 0.03), jacobian=True, jdot_qd=True, lambda_=True,
                    all_frames=True, payload=TOOL)
        got, want = small.kinematics(pid, q, qd, **args), big.kinematics(pid, q, qd, **args)
        assert calls("Kinematics") == 4
        for name in ("rotation", "origin", "jacobian", "jdot_qd", "lambda_", "frame_rotations", "frame_origins"):
            assert getattr(got, name).shape[0] == count, name
            close(getattr(got, name), getattr(want, name), f"kinematics {name}")
        small.kinematics(pid, q[:10], qd[:10], **args)  # a batch that fits is one call
        assert calls("Kinematics") == 5

        count = 23  # 10 + 10 + 3
        q, qd, x = rng.uniform(-1.5, 1.5, (count, n)), rng.uniform(-1, 1, (count, n)), rng.uniform(-5, 5, (count, n))
        wrench = rng.uniform(-2, 2, (count, 6))
        got = small.inverse_dynamics_derivatives(pid, q, qd, x, tip_wrench=wrench, payload=TOOL)
        want = big.inverse_dynamics_derivatives(pid, q, qd, x, tip_wrench=wrench, payload=TOOL)
        assert calls("Derivatives") == 3
        for name in ("dtau_dq", "dtau_dqd", "tau"):
            assert getattr(got, name).shape[0] == count
            close(getattr(got, name), getattr(want, name), f"derivatives {name}")
        got, want = small.forward_dynamics_derivatives(pid, q, qd, x), big.forward_dynamics_derivatives(pid, q, qd, x)
        assert calls("Derivatives") == 6
        for name in ("dqdd_dq", "dqdd_dqd", "dqdd_dtau", "qdd"):
            close(getattr(got, name), getattr(want, name), f"derivatives {name}")

        k, t = 8, 3  # 10 // 3 = 3 rollouts per call: 3 + 3 + 2
        x0, u = rng.uniform(-0.5, 0.5, (k, 2 * n)), rng.uniform(-5, 5, (k, t, n))
        got = small.rollout(pid, x0, u, dt=0.01, linearize=True, payload=TOOL)
        want = big.rollout(pid, x0, u, dt=0.01, linearize=True, payload=TOOL)
        assert calls("Rollout") == 3
        assert got.states.shape == (k, t + 1, 2 * n) and got.A.shape == (k, t, 2 * n, 2 * n)
        for name in ("states", "A", "B"):
            close(getattr(got, name), getattr(want, name), f"rollout {name}")
        # a shared control sequence goes whole to every part
        got, want = small.rollout(pid, x0, u[0], dt=0.01), big.rollout(pid, x0, u[0], dt=0.01)
        assert calls("Rollout") == 6
        close(got.states, want.states, "rollout with shared controls")
        # one rollout of more than max_states steps is sent as it is: the server refuses it with its message
        with pytest.raises(denoc.ResourceExhaustedError) as e:
            small.rollout(pid, x0[:2], rng.uniform(-1, 1, (2, 11, n)), dt=0.01)
        assert "max_states" in e.value.message
        assert calls("Rollout", "RESOURCE_EXHAUSTED") == 1 and calls("Rollout") == 6


@pytest.fixture
def upgrade(start_server, tmp_path):
    """A function giving (client, metrics port): a client that kept max_states = 100000 from a batched call to a
    denocd, then a denocd with --max-states 7 in its place (the same port and store), as during a rolling
    upgrade. The Panda is registered in that store; the clients are closed at the end."""
    clients, serving = [], []

    def serve(max_states: str, port: int = 0):
        if serving:
            serving.pop().stop()
        port_file = tmp_path / f"metrics-{len(clients)}-{max_states}.port"
        server = start_server("--max-states", max_states, "--metrics-listen", "127.0.0.1:0", "--metrics-port-file",
                              str(port_file), port=port)
        serving.append(server)
        return server, _metrics_port(port_file)

    def keep_large_limit_then_serve_seven():
        large, _ = serve("100000")
        c = denoc.Client(large.target)
        clients.append(c)
        panda = c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        c.inverse_dynamics(panda, np.zeros((2, panda.nq)))
        assert c.max_states() == 100000
        _, port = serve("7", large.port)
        return c, panda, port

    yield keep_large_limit_then_serve_seven
    for c in clients:
        c.close()


def _fifty_states_split_anew(upgrade, rng, method: str, rpc: str):
    """50 random Panda states (q, qd, qdd) through ``method`` of a client that kept max_states = 100000 facing a
    denocd with --max-states 7 (``upgrade``): sent whole and refused, one GetServerInfo, then 8 calls of 7, 7,
    ..., 7, 1 states. Returns (client, panda, metrics port, (q, qd, qdd), answer)."""
    c, panda, port = upgrade()
    count, n = 50, panda.dof
    states = rng.uniform(-1.5, 1.5, (count, n)), rng.uniform(-1, 1, (count, n)), rng.uniform(-3, 3, (count, n))
    answer = getattr(c, method)(panda, *states)
    assert _calls(port, rpc, "RESOURCE_EXHAUSTED") == 1
    assert _calls(port, "GetServerInfo") == 1
    assert _calls(port, rpc) == 8
    assert c.max_states() == 7
    return c, panda, port, states, answer


def test_a_dynamics_batch_refused_for_max_states_is_split_by_the_limit_read_again_once(upgrade):
    rng = np.random.default_rng(41)
    c, panda, port, (q, qd, qdd), tau = _fifty_states_split_anew(upgrade, rng, "inverse_dynamics", "InverseDynamics")
    count, n = q.shape
    assert tau.shape == (count, n)
    for k in range(count):  # the same states one by one
        close(tau[k], c.inverse_dynamics(panda, q[k], qd[k], qdd[k]), f"state {k}")

    # RESOURCE_EXHAUSTED naming a limit the client does not keep (65 wrenches, max_wrenches): raised as it is from
    # the first part, the limits not read again
    with pytest.raises(denoc.ResourceExhaustedError) as e:
        c.inverse_dynamics(panda, q, qd, qdd, wrenches=[("panda_link7", np.zeros(6))] * 65)
    assert "max_wrenches" in e.value.message and not denoc.names_cached_limit(e.value)
    assert _calls(port, "InverseDynamics", "RESOURCE_EXHAUSTED") == 2
    assert _calls(port, "GetServerInfo") == 1


def test_derivatives_and_rollouts_are_split_anew_and_a_rollout_above_the_limit_fails_after_one_re_read(upgrade):
    rng = np.random.default_rng(42)
    c, panda, port, (q, qd, qdd), d = _fifty_states_split_anew(upgrade, rng, "inverse_dynamics_derivatives",
                                                               "Derivatives")
    count, n = q.shape
    assert d.dtau_dq.shape == (count, n, n)
    for k in range(count):
        one = c.inverse_dynamics_derivatives(panda, q[k:k + 1], qd[k:k + 1], qdd[k:k + 1])
        for name in ("dtau_dq", "dtau_dqd", "tau"):
            close(getattr(d, name)[k], getattr(one, name)[0], f"{name} of state {k}")

    c, panda, port = upgrade()
    k, t = 20, 3  # 60 states; 7 // 3 = 2 rollouts per call: 10 calls
    x0, u = rng.uniform(-0.5, 0.5, (k, 2 * n)), rng.uniform(-5, 5, (k, t, n))
    r = c.rollout(panda, x0, u, dt=0.01, linearize=True)
    assert _calls(port, "Rollout", "RESOURCE_EXHAUSTED") == 1
    assert _calls(port, "GetServerInfo") == 1
    assert _calls(port, "Rollout") == 10
    assert r.states.shape == (k, t + 1, 2 * n)
    for i in range(k):
        one = c.rollout(panda, x0[i:i + 1], u[i:i + 1], dt=0.01, linearize=True)
        for name in ("states", "A", "B"):
            close(getattr(r, name)[i], getattr(one, name)[0], f"rollout {i} {name}")

    # two rollouts of 11 steps: no split fits 7 states. Kept 100000: sent whole, refused, one re-read, sent again
    # (split by 7: still whole), refused, raised
    c, panda, port = upgrade()
    x0, u = rng.uniform(-0.5, 0.5, (2, 2 * n)), rng.uniform(-1, 1, (2, 11, n))
    with pytest.raises(denoc.ResourceExhaustedError) as e:
        c.rollout(panda, x0, u, dt=0.01)
    assert "max_states = 7" in e.value.message and denoc.names_cached_limit(e.value)
    assert _calls(port, "Rollout", "RESOURCE_EXHAUSTED") == 2
    assert _calls(port, "GetServerInfo") == 1
    # kept 7: refused, one re-read (7 again), raised without sending again
    with pytest.raises(denoc.ResourceExhaustedError):
        c.rollout(panda, x0, u, dt=0.01)
    assert _calls(port, "Rollout", "RESOURCE_EXHAUSTED") == 3
    assert _calls(port, "GetServerInfo") == 2
    assert _calls(port, "Rollout") == 0
