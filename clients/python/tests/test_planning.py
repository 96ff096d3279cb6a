"""The planners' calls against finite differences and closed forms on the Panda: the Jacobian is the
derivative of the frame's origin, the derivatives of ID are those of inverse_dynamics, dqdd/dtau inverts
I(q), one semi-implicit Euler step is its formula and A its finite difference, and a point-mass payload at
the tip adds J_v^T m |g| to the static torques (the registered model untouched)."""

import numpy as np
import pytest

import denoc
from conftest import PANDA_HAND, PANDA_TIP


@pytest.fixture(scope="module")
def panda(server):
    with denoc.Client(server.target) as c:
        return c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)


@pytest.fixture(scope="module")
def q0():
    return np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7])


def test_shapes(client, panda, q0):
    q = np.tile(q0, (3, 1))
    k = client.kinematics(panda, q, np.zeros_like(q), jacobian=True, jdot_qd=True, lambda_=True,
                          lambda_rows="linear", all_frames=True)
    assert k.rotation.shape == (3, 3, 3) and k.origin.shape == (3, 3) and k.jacobian.shape == (3, 6, 7)
    assert k.jdot_qd.shape == (3, 6) and k.lambda_.shape == (3, 3, 3)
    assert k.frame_rotations.shape == (3, 8, 3, 3) and k.frame_origins.shape == (3, 8, 3)
    np.testing.assert_allclose(k.frame_origins[:, -1], k.origin, rtol=0, atol=1e-12)  # the tip is frame n
    one = client.kinematics(panda, q0, link="panda_link4")
    assert one.rotation.shape == (3, 3) and one.jacobian is None


def test_jacobian_is_the_derivative_of_the_origin(client, panda, q0):
    h = 1e-6
    k = client.kinematics(panda, q0, jacobian=True)
    steps = np.vstack([q0 + h * e for e in np.eye(7)] + [q0 - h * e for e in np.eye(7)])
    p = client.kinematics(panda, steps).origin
    fd = (p[:7] - p[7:]).T / (2 * h)
    np.testing.assert_allclose(k.jacobian[3:], fd, rtol=0, atol=1e-8)


def test_inverse_dynamics_derivatives_are_those_of_inverse_dynamics(client, panda, q0):
    rng = np.random.default_rng(3)
    qd, qdd = rng.uniform(-1, 1, 7), rng.uniform(-2, 2, 7)
    d = client.inverse_dynamics_derivatives(panda, q0, qd, qdd)
    np.testing.assert_allclose(d.tau, client.inverse_dynamics(panda, q0, qd, qdd), rtol=0, atol=1e-11)
    h = 1e-6
    E = np.eye(7)
    plus_q = client.inverse_dynamics(panda, q0 + h * E, np.tile(qd, (7, 1)), np.tile(qdd, (7, 1)))
    minus_q = client.inverse_dynamics(panda, q0 - h * E, np.tile(qd, (7, 1)), np.tile(qdd, (7, 1)))
    np.testing.assert_allclose(d.dtau_dq, (plus_q - minus_q).T / (2 * h), rtol=0, atol=1e-6)
    plus_v = client.inverse_dynamics(panda, np.tile(q0, (7, 1)), qd + h * E, np.tile(qdd, (7, 1)))
    minus_v = client.inverse_dynamics(panda, np.tile(q0, (7, 1)), qd - h * E, np.tile(qdd, (7, 1)))
    np.testing.assert_allclose(d.dtau_dqd, (plus_v - minus_v).T / (2 * h), rtol=0, atol=1e-6)


def test_dqdd_dtau_inverts_the_inertia(client, panda, q0):
    f = client.forward_dynamics_derivatives(panda, q0, np.zeros(7), np.ones(7))
    inertia = client.full_factor(panda, q0).inertia
    np.testing.assert_allclose(f.dqdd_dtau @ inertia, np.eye(7), rtol=0, atol=1e-9)
    np.testing.assert_allclose(f.qdd, client.forward_dynamics(panda, q0, np.zeros(7), np.ones(7)), atol=1e-10)


def test_one_euler_step_and_its_linearization(client, panda, q0):
    dt = 0.01
    x0 = np.concatenate([q0, 0.1 * np.ones(7)])
    u = np.full((1, 7), 2.0)
    r = client.rollout(panda, x0, u, dt=dt, scheme="semi_implicit_euler", linearize=True)
    assert r.states.shape == (2, 14) and r.A.shape == (1, 14, 14) and r.B.shape == (1, 14, 7)
    qdd = client.forward_dynamics(panda, q0, x0[7:], u[0])
    qd1 = x0[7:] + dt * qdd
    np.testing.assert_allclose(r.states[1], np.concatenate([q0 + dt * qd1, qd1]), rtol=0, atol=1e-12)
    h = 1e-6
    plus = client.rollout(panda, x0 + h * np.eye(14), u, dt=dt, scheme="semi_implicit_euler").states[:, 1]
    minus = client.rollout(panda, x0 - h * np.eye(14), u, dt=dt, scheme="semi_implicit_euler").states[:, 1]
    np.testing.assert_allclose(r.A[0], (plus - minus).T / (2 * h), rtol=0, atol=1e-7)


def test_a_point_mass_payload_adds_its_weight_through_the_jacobian(client, panda, q0):
    m = 2.0
    before = client.inverse_dynamics(panda, q0)
    k = client.kinematics(panda, q0, jacobian=True)
    d = client.inverse_dynamics_derivatives(panda, q0, payload=denoc.Payload(mass=m))
    np.testing.assert_allclose(d.tau - before, k.jacobian[3:].T @ np.array([0, 0, m * 9.81]), rtol=0, atol=1e-10)
    np.testing.assert_allclose(client.inverse_dynamics(panda, q0, payload={"mass": m}), d.tau, rtol=0, atol=1e-12)
    with client.stream() as session:
        np.testing.assert_allclose(session.inverse_dynamics(panda, q0, payload=denoc.Payload(mass=m)), d.tau,
                                   rtol=0, atol=1e-12)
    # the registered model is untouched
    np.testing.assert_allclose(client.inverse_dynamics(panda, q0), before, rtol=0, atol=0)
    with pytest.raises(denoc.InvalidArgumentError, match="payload"):
        client.rollout(panda, np.zeros(14), np.zeros((2, 7)), dt=0.01, payload={"mass": -1.0})
