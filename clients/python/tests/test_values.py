"""Values: the Panda (panda_hand.urdf, tip panda_hand_tcp) registered through the client; inverse dynamics,
forward dynamics and the full factor on 100 states equal the C++ core's values computed in-process (the
`denoc` CLI on the same file and states) to 1e-12 relative."""

import numpy as np
import pytest

import denoc
from conftest import PANDA_HAND, PANDA_TIP, close, run_cli

COUNT = 100


@pytest.fixture(scope="module")
def panda(server):
    with denoc.Client(server.target, timeout=30) as c:
        info = c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
    return info


@pytest.fixture(scope="module")
def states(panda):
    rng = np.random.default_rng(20261122)
    lower = np.where(np.isfinite(panda.lower), panda.lower, -np.pi)
    upper = np.where(np.isfinite(panda.upper), panda.upper, np.pi)
    q = rng.uniform(lower, upper, size=(COUNT, panda.dof))
    qd = rng.uniform(-2.0, 2.0, size=(COUNT, panda.dof))
    qdd = rng.uniform(-5.0, 5.0, size=(COUNT, panda.dof))
    tau = rng.uniform(-20.0, 20.0, size=(COUNT, panda.dof))
    return q, qd, qdd, tau


def as_json(**arrays):
    count = len(next(iter(arrays.values())))
    return [{k: [float(x) for x in v[i]] for k, v in arrays.items()} for i in range(count)]


def test_registered_panda_description(client, panda):
    assert panda.dof == 7
    assert panda.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    assert panda.joint_types == ["revolute"] * 7
    assert panda.source == "urdf"
    np.testing.assert_array_equal(panda.gravity, [0.0, 0.0, -9.81])
    again = client.register_urdf(PANDA_HAND.read_text(), tip_link=PANDA_TIP)  # text instead of path
    assert again.model_id == panda.model_id and again.created is False
    assert client.get_model(panda.model_id).model_id == panda.model_id
    assert panda.model_id in [m.model_id for m in client.list_models()]


def test_inverse_dynamics_equals_core(client, panda, states, tmp_path):
    q, qd, qdd, _ = states
    tau = client.inverse_dynamics(panda, q, qd, qdd)
    assert tau.shape == (COUNT, 7) and tau.dtype == np.float64 and tau.flags.c_contiguous
    ref = run_cli("id", PANDA_HAND, as_json(q=q, qd=qd, qdd=qdd), tmp_path, "--tip-link", PANDA_TIP)
    close(tau, [s["tau"] for s in ref], "tau")
    one = client.inverse_dynamics(panda.model_id, q[3], qd[3], qdd[3])  # one state: 1-D in, 1-D out
    assert one.shape == (7,)
    close(one, ref[3]["tau"], "tau of state 3")


@pytest.mark.parametrize("route", ["saha", "cholesky", "fixman"])
def test_forward_dynamics_equals_core(client, panda, states, route, tmp_path):
    q, qd, _, tau = states
    qdd = client.forward_dynamics(panda, q, qd, tau, route=route)
    assert qdd.shape == (COUNT, 7)
    # the CLI has the saha and cholesky routes; fixman is an independent O(n) route to the same qdd,
    # compared with the saha values at a looser tolerance (different rounding)
    cli_route = "cholesky" if route == "cholesky" else "saha"
    ref = np.array([s["qdd"] for s in run_cli("fd", PANDA_HAND, as_json(q=q, qd=qd, tau=tau), tmp_path,
                                              "--tip-link", PANDA_TIP, "--route", cli_route)])
    if route == "fixman":
        np.testing.assert_allclose(qdd, ref, rtol=1e-8, atol=1e-8 * np.max(np.abs(ref)))
    else:
        close(qdd, ref, f"qdd ({route})")
    # and back: inverse dynamics of the answer gives the torques
    np.testing.assert_allclose(client.inverse_dynamics(panda, q, qd, qdd), tau, rtol=1e-9, atol=1e-9)


def test_full_factor_equals_core(client, panda, states, tmp_path):
    q, qd, _, _ = states
    f = client.full_factor(panda, q, qd, convective=True, bias=True, gravity_torque=True, inverse=True)
    ref = run_cli("factor", PANDA_HAND, as_json(q=q), tmp_path, "--tip-link", PANDA_TIP, "--inverse")
    assert f.inertia.shape == (COUNT, 7, 7) and f.d.shape == (COUNT, 7) and f.log_det.shape == (COUNT,)
    close(f.inertia, [s["I"] for s in ref], "I")
    close(f.u, [s["U"] for s in ref], "U")
    close(f.d, [s["D"] for s in ref], "D")
    close(f.log_det, [s["log_det"] for s in ref], "log det")
    close(f.inverse, [s["I_inv"] for s in ref], "I^-1")
    # the terms the CLI does not print, against the inverse dynamics checked above
    zeros = np.zeros_like(q)
    np.testing.assert_allclose(f.bias, client.inverse_dynamics(panda, q, qd, zeros), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(f.gravity_torque, client.inverse_dynamics(panda, q, zeros, zeros),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.einsum("kij,kj->ki", f.convective, qd) + f.gravity_torque, f.bias,
                               rtol=1e-10, atol=1e-10)
    # without the optional terms they are None; one state drops the count axis
    one = client.full_factor(panda, q[0])
    assert one.inertia.shape == (7, 7) and isinstance(one.log_det, float)
    assert one.convective is None and one.bias is None and one.inverse is None and one.gravity_torque is None
    close(one.inertia, ref[0]["I"], "I of state 0")


def test_builtin_models_and_dh_registration(client):
    names = {m.name: m for m in client.list_models()}
    assert {"stanford_arm", "planar_3r"} <= set(names)
    assert names["stanford_arm"].pinned and names["stanford_arm"].dof == 6
    # the example file is the built-in model: same content, same id
    from conftest import REPO
    info = client.register_dh(REPO / "examples" / "models" / "stanford_arm.json")
    assert info.model_id == names["stanford_arm"].model_id and info.created is False
    info = client.register_dh(REPO / "examples" / "models" / "planar_3r.json")
    assert info.model_id == names["planar_3r"].model_id
