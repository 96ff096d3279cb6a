"""The configuration manifold on the client (denoc.integrate, difference, normalize, neutral,
random_configuration) without a server: against each other (difference inverts integrate both ways, turns
compose), against an independent construction (Rodrigues' formula for the root's turn, the position moved
along the starting orientation), and the refusals of the core (the quaternion's norm, sizes, non-finite
entries). Their agreement with the server's rollouts on the manifold is in test_trees.py."""

import numpy as np
import pytest

import denoc

RNG = np.random.default_rng(24)


def skew(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def rodrigues(w):
    """exp(skew(w)), written out (independent of the quaternion code under test)."""
    angle = np.linalg.norm(w)
    if angle == 0:
        return np.eye(3)
    k = skew(w / angle)
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def random_floating(count, joints=4):
    q = np.zeros((count, 7 + joints))
    q[:, :3] = RNG.uniform(-1, 1, (count, 3))
    x = RNG.normal(size=(count, 4))
    q[:, 3:7] = x / np.linalg.norm(x, axis=1, keepdims=True)
    q[:, 7:] = RNG.uniform(-np.pi, np.pi, (count, joints))
    return q


def test_difference_inverts_integrate_on_a_floating_root():
    q0 = random_floating(200)
    v = RNG.uniform(-1, 1, (200, 6 + 4))
    v[:, :3] *= 2.5 / np.maximum(1.0, np.linalg.norm(v[:, :3], axis=1, keepdims=True))  # turns below pi
    q1 = denoc.integrate("floating", q0, v, 1.0)
    assert q1.shape == q0.shape
    np.testing.assert_allclose(np.linalg.norm(q1[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(denoc.difference("floating", q0, q1), v, rtol=0, atol=1e-12)
    # and the other way round: integrate(q0, difference(q0, q1)) = q1 (the quaternion up to its sign)
    q2 = denoc.integrate("floating", q0, denoc.difference("floating", q0, q1))
    sign = np.sign(np.sum(q2[:, 3:7] * q1[:, 3:7], axis=1, keepdims=True))
    np.testing.assert_allclose(q2[:, :3], q1[:, :3], rtol=0, atol=1e-13)
    np.testing.assert_allclose(sign * q2[:, 3:7], q1[:, 3:7], rtol=0, atol=1e-14)
    np.testing.assert_allclose(q2[:, 7:], q1[:, 7:], rtol=0, atol=1e-15)


def test_integrate_is_the_turn_about_the_root_axes_and_the_move_along_its_start():
    q0 = random_floating(20, joints=2)
    v = RNG.uniform(-2, 2, (20, 8))
    dt = 0.37
    q1 = denoc.integrate("floating", q0, v, dt)
    for k in range(20):
        r0 = denoc.rotation_matrix(q0[k, 3:7])
        np.testing.assert_allclose(r0 @ r0.T, np.eye(3), rtol=0, atol=1e-15)
        np.testing.assert_allclose(denoc.rotation_matrix(q1[k, 3:7]), r0 @ rodrigues(v[k, :3] * dt), rtol=0,
                                   atol=1e-14)
        np.testing.assert_allclose(q1[k, :3], q0[k, :3] + r0 @ v[k, 3:6] * dt, rtol=0, atol=1e-15)
        np.testing.assert_allclose(q1[k, 7:], q0[k, 7:] + v[k, 6:] * dt, rtol=0, atol=1e-15)


def test_turns_compose_and_zero_is_the_identity():
    q0 = random_floating(10)
    v = RNG.uniform(-1, 1, (10, 10))
    a, b = 0.3, 0.45
    twice = denoc.integrate("floating", denoc.integrate("floating", q0, v, a), v, b)
    once = denoc.integrate("floating", q0, v, a + b)
    np.testing.assert_allclose(np.abs(np.sum(twice[:, 3:7] * once[:, 3:7], axis=1)), 1.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(twice[:, 7:], once[:, 7:], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(denoc.integrate("floating", q0, np.zeros(10), 1.0)[:, 7:], q0[:, 7:])
    np.testing.assert_allclose(denoc.difference("floating", q0, q0), 0.0, rtol=0, atol=0)
    # a small step is first order: difference(q, integrate(q, v, h)) / h = v for tiny h too (no cancellation)
    h = 1e-9
    np.testing.assert_allclose(denoc.difference("floating", q0, denoc.integrate("floating", q0, v, h)) / h, v,
                               rtol=0, atol=1e-6)


def test_planar_and_fixed_roots_add():
    q0 = RNG.uniform(-1, 1, (5, 6))
    v = RNG.uniform(-1, 1, (5, 6))
    for root in ("planar", "fixed"):
        np.testing.assert_allclose(denoc.integrate(root, q0, v, 0.2), q0 + 0.2 * v, rtol=0, atol=1e-16)
        np.testing.assert_allclose(denoc.difference(root, q0, q0 + v), v, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(denoc.normalize(root, q0), q0)


def test_broadcasting_one_state_against_a_batch():
    q0 = random_floating(1)[0]
    v = RNG.uniform(-1, 1, (7, 10))
    out = denoc.integrate("floating", q0, v, 0.1)
    assert out.shape == (7, 11)
    for k in range(7):
        np.testing.assert_array_equal(out[k], denoc.integrate("floating", q0, v[k], 0.1))
    assert denoc.difference("floating", q0, out).shape == (7, 10)


def test_normalize_and_the_refusals():
    q = random_floating(3)
    q[:, 3:7] *= np.array([[0.5], [1.0], [3.0]])
    n = denoc.normalize("floating", q)
    np.testing.assert_allclose(np.linalg.norm(n[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(n[:, 3:7] * np.array([[0.5], [1.0], [3.0]]), q[:, 3:7], rtol=0, atol=1e-15)
    # integrate and difference take only unit quaternions (within 1e-6, as the core), naming the norm
    with pytest.raises(denoc.InvalidArgumentError, match=r"q\[3\.\.7\), the root's quaternion \(state \(0,\)\), "
                                                         r"has norm 0\.5, expected 1 within 1e-06"):
        denoc.integrate("floating", q, np.zeros(10))
    zero = random_floating(1)[0]
    zero[3:7] = 0.0
    for call in (lambda: denoc.normalize("floating", zero), lambda: denoc.difference("floating", zero, zero)):
        with pytest.raises(denoc.InvalidArgumentError, match="quaternion, has norm 0"):
            call()
    huge = random_floating(1)[0]
    huge[3:7] = 1e300 * 0.5
    with pytest.raises(denoc.InvalidArgumentError, match="beyond 1e\\+06"):
        denoc.normalize("floating", huge)
    bad = random_floating(1)[0]
    bad[8] = np.nan
    with pytest.raises(denoc.InvalidArgumentError, match="non-finite"):
        denoc.integrate("floating", bad, np.zeros(10))
    with pytest.raises(denoc.InvalidArgumentError, match="v: expected 10 values"):
        denoc.integrate("floating", random_floating(1)[0], np.zeros(11))
    with pytest.raises(denoc.InvalidArgumentError, match="root"):
        denoc.integrate("spherical", np.zeros(3), np.zeros(3))
    with pytest.raises(denoc.InvalidArgumentError, match="dt"):
        denoc.integrate("planar", np.zeros(3), np.zeros(3), np.inf)


def test_with_a_model_description():
    model = denoc.ModelInfo(model_id="0" * 64, name="legs", dof=9, joint_names=["a", "b", "c"],
                            link_names=["la", "lb", "lc"], joint_types=["revolute", "prismatic", "revolute"],
                            gravity=np.zeros(3), lower=np.array([0.2, -1.0, -np.inf]),
                            upper=np.array([1.0, -0.5, np.inf]), velocity_limit=np.zeros(3),
                            effort_limit=np.zeros(3), armature=np.zeros(3), pinned=False, source="urdf", nq=10,
                            nv=9, nu=3, root="floating")
    np.testing.assert_array_equal(denoc.neutral(model), [0, 0, 0, 0, 0, 0, 1, 0.2, -0.5, 0])
    q = denoc.random_configuration(model, np.random.default_rng(1), count=500)
    assert q.shape == (500, 10)
    np.testing.assert_allclose(np.linalg.norm(q[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-15)
    assert np.all((q[:, 7] >= 0.2) & (q[:, 7] <= 1.0) & (q[:, 8] >= -1.0) & (q[:, 8] <= -0.5))
    assert np.all(np.abs(q[:, 9]) <= np.pi) and np.all(np.abs(q[:, :3]) <= 1.0)
    v = RNG.uniform(-1, 1, 9)
    np.testing.assert_allclose(denoc.difference(model, q[0], denoc.integrate(model, q[0], v)), v, atol=1e-14)
    with pytest.raises(denoc.InvalidArgumentError, match="q: expected 10 values"):
        denoc.integrate(model, np.zeros(9), v)
    fixed = denoc.ModelInfo(model_id="1" * 64, name="arm", dof=2, joint_names=["a", "b"], link_names=["la", "lb"],
                            joint_types=["revolute"] * 2, gravity=np.zeros(3), lower=np.array([-1.0, 0.5]),
                            upper=np.array([1.0, 2.0]), velocity_limit=np.zeros(2), effort_limit=np.zeros(2),
                            armature=np.zeros(2), pinned=False, source="dh")
    assert (fixed.nq, fixed.nv, fixed.nu, fixed.root) == (2, 2, 2, "fixed")
    np.testing.assert_array_equal(denoc.neutral(fixed), [0, 0.5])
