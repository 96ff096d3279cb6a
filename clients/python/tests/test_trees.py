"""Trees with a floating, planar or fixed root through the Python client against a real denocd, checked
without the code under test: the model's tables against the URDF, external wrenches as J^T w (J from the
service's Kinematics), forward dynamics inverting inverse dynamics with the same wrenches, several frames in
one call against one call per frame, Jacobians, the centre of mass's Jacobian and the derivatives against
central differences along the client's own integrate (so the client's manifold and the server's agree),
the centroidal momentum's linear part as m J_com qd, a payload on a named link as its weight's wrench, one
semi-implicit Euler step of a rollout as FD and the client's integrate, A and B against central differences
on the manifold, batches above max_states split, the refusals naming their field, and external wrenches in
Derivatives (tau as InverseDynamics', dtau/dq as its central differences) and Rollout (the first step as
ForwardDynamics with the wrenches).
The element-by-element comparison with the core in-process (the CLI) is in test_trees_oracle.py."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import denoc
from conftest import MODELS

SOLO = MODELS / "trees" / "solo12.urdf"
HUMANOID = MODELS / "trees" / "simple_humanoid.urdf"
FEET = ["FL_LOWER_LEG", "FR_LOWER_LEG", "HL_LOWER_LEG", "HR_LOWER_LEG"]
RNG = np.random.default_rng(2404)
MASS = sum(float(m.get("value")) for m in ET.parse(SOLO).getroot().iter("mass"))  # 2.5000 kg, feet included


@pytest.fixture(scope="module")
def models(server):
    with denoc.Client(server.target, timeout=60) as c:
        return {root: c.register_urdf(SOLO, root=root) for root in ("floating", "planar", "fixed")}


@pytest.fixture(scope="module")
def solo(models):
    return models["floating"]


def states(model, count):
    """count random configurations (the client's random_configuration) and velocities."""
    q = denoc.random_configuration(model, RNG, count)
    return q, RNG.uniform(-1.0, 1.0, (count, model.nv))


def test_model_tables_are_the_urdfs(client, models):
    root = ET.parse(SOLO).getroot()
    moving = [j for j in root.iter("joint") if j.get("type") != "fixed"]
    names = [j.get("name") for j in moving]
    parent_of = {j.find("child").get("link"): j.find("parent").get("link") for j in root.iter("joint")}
    child_of = {j.get("name"): j.find("child").get("link") for j in moving}
    for kind, (nq, nv, r) in {"floating": (19, 18, 1), "planar": (15, 15, 1), "fixed": (12, 12, 0)}.items():
        m = models[kind]
        assert (m.nq, m.nv, m.nu, m.dof, m.root) == (nq, nv, 12, nv, kind)
        assert m.joint_names == names and [j.name for j in m.joints[r:]] == names
        assert m.link_names == [child_of[n] for n in names]
        if r:
            j0 = m.joints[0]
            assert (j0.name, j0.type, j0.parent, j0.q_index, j0.v_index, j0.link) == (
                "root_joint", kind, -1, 0, 0, "base_link")
            assert (j0.nq, j0.nv) == ((7, 6) if kind == "floating" else (3, 3))
        for k, j in enumerate(m.joints[r:], start=r):
            assert (j.type, j.nq, j.nv) == ("revolute", 1, 1)
            assert (j.q_index, j.v_index) == (nq - 12 + k - r, nv - 12 + k - r)
            # the parent joint moves the URDF parent link of this joint's link (the base link: the root joint)
            parent_link = parent_of[j.link]
            expected = next((i for i, p in enumerate(m.joints) if p.link == parent_link), -1)
            assert j.parent == expected, j
            assert j.depth == (m.joints[j.parent].depth if j.parent >= 0 else 0) + 1
        assert m.depth in (3, 4) and max(j.depth for j in m.joints) == 3 + r
        # the links, the tip, the root link, then the URDF's fixed frames (the feet) fixed to their lower legs
        feet = [j.find("child").get("link") for j in root.iter("joint") if j.get("type") == "fixed"]
        assert feet == ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
        assert m.frame_names == m.link_names + ["tip", "base_link"] + feet
        assert [f.joint for f in m.frames[:12]] == list(range(r, 12 + r))
        assert m.frames[13].joint == (0 if r else -1) and all(f.fixed_to == "" for f in m.frames[:14])
        for f in m.frames[14:]:
            assert f.fixed_to == parent_of[f.name] and f.joint == m.joints.index(
                next(j for j in m.joints if j.link == f.fixed_to))
        # the server's description round trips
        assert client.get_model(m).joints == m.joints and client.get_model(m.model_id).frames == m.frames
        listed = {x.model_id: x for x in client.list_models()}
        assert listed[m.model_id].nq == nq and listed[m.model_id].root == kind
    serial = client.find_model("stanford_arm")
    assert (serial.nq, serial.nv, serial.nu, serial.root) == (6, 6, 6, "fixed") and len(serial.joints) == 6


def test_server_info_has_the_tree_limits(client):
    info = client.get_server_info()
    assert info.max_depth >= 64 and info.max_wrenches >= 4 and info.max_frames >= 4


def test_shapes_of_every_call(client, solo):
    K = 3
    q, qd = states(solo, K)
    assert client.inverse_dynamics(solo, q, qd, qd).shape == (K, 18)
    assert client.inverse_dynamics(solo.model_id, q[0]).shape == (18,)  # by id: sizes asked once
    assert client.forward_dynamics(solo, q, qd).shape == (K, 18)
    f = client.full_factor(solo, q, qd, bias=True, gravity_torque=True, inverse=True)
    assert f.inertia.shape == (K, 18, 18) and f.bias.shape == (K, 18) and f.log_det.shape == (K,)
    k = client.kinematics(solo, q, qd, links=FEET, jacobian=True, jdot_qd=True, all_frames=True,
                          center_of_mass=True, com_jacobian=True, centroidal=True, centroidal_momentum=True)
    assert k.rotation.shape == (K, 4, 3, 3) and k.origin.shape == (K, 4, 3)
    assert k.jacobian.shape == (K, 4, 6, 18) and k.jdot_qd.shape == (K, 4, 6)
    assert k.frame_rotations.shape == (K, 14, 3, 3) and k.frame_origins.shape == (K, 14, 3)
    assert k.com.shape == (K, 3) and k.mass.shape == (K,) and k.com_jacobian.shape == (K, 3, 18)
    assert k.centroidal.shape == (K, 6, 18) and k.centroidal_momentum.shape == (K, 6)
    one = client.kinematics(solo, q[0], qd[0], center_of_mass=True, centroidal_momentum=True)
    assert one.rotation.shape == (3, 3) and isinstance(one.mass, float) and one.centroidal_momentum.shape == (6,)
    d = client.forward_dynamics_derivatives(solo, q, qd, qd)
    assert d.dqdd_dq.shape == (K, 18, 18) and d.qdd.shape == (K, 18)
    x0 = np.hstack([q, qd])
    r = client.rollout(solo, x0, np.zeros((K, 5, 12)), dt=0.01, linearize=True)
    assert r.states.shape == (K, 6, 37) and r.A.shape == (K, 5, 36, 36) and r.B.shape == (K, 5, 36, 12)
    r = client.rollout(solo, x0[0], np.zeros((5, 12)), dt=0.01)
    assert r.states.shape == (6, 37) and r.A is None
    planar = client.get_model(client.register_urdf(SOLO, root="planar").model_id)
    qp, qdp = states(planar, 2)
    assert client.inverse_dynamics(planar, qp, qdp).shape == (2, 15)
    assert client.rollout(planar, np.hstack([qp, qdp]), np.zeros((4, 12)), dt=0.01).states.shape == (2, 5, 30)
    with client.stream() as s:
        assert s.inverse_dynamics(solo.model_id, q[0]).shape == (18,)
        assert s.forward_dynamics(solo, q[0], qd[0]).shape == (18,)
    run = client.simulate_all(solo, q[0], qd[0], t_end=0.05, integrator="rk4", step=1e-3, dt_out=0.01,
                              torque=np.zeros(12))
    assert run.q.shape == (6, 19) and run.qd.shape == (6, 18) and run.energy.shape == (6,)
    np.testing.assert_allclose(np.linalg.norm(run.q[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(run.q[0], q[0])


def test_external_wrenches_are_jacobian_transposes(client, solo):
    K = 4
    q, qd = states(solo, K)
    qdd = RNG.uniform(-2, 2, (K, 18))
    plain = client.inverse_dynamics(solo, q, qd, qdd)
    w_world = RNG.uniform(-5, 5, (K, 6))  # one per state, world axes
    w_local = RNG.uniform(-5, 5, 6)  # the same for every state, in the frame's axes
    k = client.kinematics(solo, q, links=["FL_LOWER_LEG", "base_link"], jacobian=True, reference="world")
    kl = client.kinematics(solo, q, links=["HR_LOWER_LEG"], jacobian=True, reference="local")
    wrenches = [("FL_LOWER_LEG", w_world), denoc.LinkWrench("HR_LOWER_LEG", w_local, "local"),
                {"link": "base_link", "wrench": w_local, "reference": "world"}]
    got = client.inverse_dynamics(solo, q, qd, qdd, wrenches=wrenches)
    expected = (plain - np.einsum("kji,kj->ki", k.jacobian[:, 0], w_world)
                - np.einsum("kji,j->ki", kl.jacobian[:, 0], w_local)
                - np.einsum("kji,j->ki", k.jacobian[:, 1], w_local))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 * max(1.0, np.abs(plain).max()))
    # forward dynamics with the same wrenches inverts it (the articulated-body route; without wrenches the
    # inertia-matrix route too)
    np.testing.assert_allclose(client.forward_dynamics(solo, q, qd, got, wrenches=wrenches), qdd, rtol=0, atol=1e-9)
    for route in ("saha", "cholesky"):
        np.testing.assert_allclose(client.forward_dynamics(solo, q, qd, plain, route=route), qdd, rtol=0, atol=1e-9)
    with pytest.raises(denoc.InvalidArgumentError, match="wrenches need route"):
        client.forward_dynamics(solo, q, qd, got, wrenches=wrenches, route="cholesky")
    # the stream, state by state, agrees with the batch
    with client.stream() as s:
        for i in range(K):
            one = [(link, w if np.ndim(w) == 1 else w[i], ref) for link, w, ref in
                   [("FL_LOWER_LEG", w_world, "world"), ("HR_LOWER_LEG", w_local, "local"),
                    ("base_link", w_local, "world")]]
            np.testing.assert_allclose(s.inverse_dynamics(solo, q[i], qd[i], qdd[i], wrenches=one), got[i], rtol=0,
                                       atol=1e-12 * max(1.0, np.abs(got).max()))
            np.testing.assert_allclose(s.forward_dynamics(solo, q[i], qd[i], got[i], wrenches=one), qdd[i], rtol=0,
                                       atol=1e-9)


def test_a_fixed_frame_is_its_point_on_the_link(client, solo):
    """FL_FOOT, welded to FL_LOWER_LEG at (0, 0.008, -0.16) by the URDF's fixed joint FL_ANKLE: its pose, its
    Jacobian, a wrench on it and a payload on it are those of that point of the lower leg."""
    q, qd = states(solo, 4)
    p = np.array([0.0, 0.008, -0.16])
    foot = client.kinematics(solo, q, qd, link="FL_FOOT", jacobian=True, jdot_qd=True)
    leg = client.kinematics(solo, q, qd, link="FL_LOWER_LEG", point=p, jacobian=True, jdot_qd=True)
    np.testing.assert_allclose(foot.rotation, leg.rotation, rtol=0, atol=1e-15)
    np.testing.assert_allclose(foot.origin, leg.origin + np.einsum("kij,j->ki", leg.rotation, p), rtol=0, atol=1e-15)
    np.testing.assert_allclose(foot.jacobian, leg.jacobian, rtol=0, atol=1e-14)
    np.testing.assert_allclose(foot.jdot_qd, leg.jdot_qd, rtol=0, atol=1e-13)
    f = RNG.uniform(-5, 5, (4, 3))
    r = np.einsum("kij,j->ki", leg.rotation, p)
    on_foot = client.inverse_dynamics(solo, q, qd, wrenches=[("FL_FOOT", np.hstack([np.zeros((4, 3)), f]))])
    on_leg = client.inverse_dynamics(solo, q, qd, wrenches=[("FL_LOWER_LEG", np.hstack([np.cross(r, f), f]))])
    np.testing.assert_allclose(on_foot, on_leg, rtol=0, atol=1e-12)
    held = client.inverse_dynamics(solo, q, payload=denoc.Payload(mass=0.4, link="FL_FOOT"))
    np.testing.assert_allclose(held, client.inverse_dynamics(solo, q, payload=denoc.Payload(
        mass=0.4, com=p, link="FL_LOWER_LEG")), rtol=0, atol=1e-12)


def test_several_frames_in_one_call_are_the_single_frame_calls(client, solo):
    q, qd = states(solo, 5)
    point = (0.01, -0.02, 0.03)
    names = FEET + ["base_link", "tip", "FR_SHOULDER", "HR_FOOT"]
    args = dict(point=point, jacobian=True, jdot_qd=True)
    for reference in ("world", "local"):
        many = client.kinematics(solo, q, qd, links=names, reference=reference, **args)
        for i, name in enumerate(names):
            one = client.kinematics(solo, q, qd, link=name, reference=reference, **args)
            for field in ("rotation", "origin", "jacobian", "jdot_qd"):
                np.testing.assert_array_equal(getattr(many, field)[:, i], getattr(one, field), err_msg=field)
    every = client.kinematics(solo, q, all_frames=True)
    np.testing.assert_array_equal(every.frame_origins[:, :12],
                                  client.kinematics(solo, q, links=solo.link_names).origin)
    np.testing.assert_array_equal(every.frame_origins[:, 13], client.kinematics(solo, q, link="base_link").origin)
    np.testing.assert_allclose(every.frame_origins[:, 13], q[:, :3], rtol=0, atol=1e-15)  # the root's origin is q
    np.testing.assert_allclose(every.frame_rotations[:, 13], denoc.rotation_matrix(q[:, 3:7]), rtol=0, atol=1e-15)


def tangent_differences(client, model, q, f, h=1e-6):
    """Central differences of f(q') along integrate(q, +-h e_j) for every tangent direction j: (nv, ...)."""
    E = np.eye(model.nv)
    plus = f(denoc.integrate(model, q, h * E))
    minus = f(denoc.integrate(model, q, -h * E))
    return (plus - minus) / (2 * h)


def test_jacobians_are_derivatives_along_the_clients_integrate(client, solo):
    q = denoc.random_configuration(solo, RNG)
    point = np.array([0.0, 0.008, -0.16])  # the FL foot
    k = client.kinematics(solo, q, links=["FL_LOWER_LEG", "base_link"], point=point, jacobian=True,
                          center_of_mass=True, com_jacobian=True)

    def foot(qs):
        kk = client.kinematics(solo, qs, links=["FL_LOWER_LEG", "base_link"], center_of_mass=True)
        at = kk.origin + np.einsum("klij,j->kli", kk.rotation, point)  # the point on both frames
        return np.concatenate([at[:, 0], at[:, 1], kk.com], axis=1)

    fd = tangent_differences(client, solo, q, foot).T  # (9, nv)
    np.testing.assert_allclose(k.jacobian[0, 3:], fd[:3], rtol=0, atol=1e-8)
    np.testing.assert_allclose(k.jacobian[1, 3:], fd[3:6], rtol=0, atol=1e-8)
    np.testing.assert_allclose(k.com_jacobian, fd[6:], rtol=0, atol=1e-8)
    # the angular rows: R(+h) R(-h)^T = exp(2h [J_w e_j])
    E = np.eye(18)
    h = 1e-6
    rp = client.kinematics(solo, denoc.integrate(solo, q, h * E), link="FL_LOWER_LEG").rotation
    rm = client.kinematics(solo, denoc.integrate(solo, q, -h * E), link="FL_LOWER_LEG").rotation
    d = np.einsum("kij,klj->kil", rp, rm)
    w = np.stack([d[:, 2, 1] - d[:, 1, 2], d[:, 0, 2] - d[:, 2, 0], d[:, 1, 0] - d[:, 0, 1]], axis=0) / (4 * h)
    np.testing.assert_allclose(k.jacobian[0, :3], w, rtol=0, atol=1e-8)
    # the root's linear columns move the robot along its own axes: the base point's block is R
    np.testing.assert_allclose(k.jacobian[1, 3:, 3:6], denoc.rotation_matrix(q[3:7]), rtol=0, atol=1e-14)


def test_centroidal_momentum(client, models):
    for kind in ("floating", "planar"):
        m = models[kind]
        q, qd = states(m, 6)
        k = client.kinematics(m, q, qd, center_of_mass=True, com_jacobian=True, centroidal=True,
                              centroidal_momentum=True)
        np.testing.assert_allclose(k.centroidal_momentum, np.einsum("kij,kj->ki", k.centroidal, qd), rtol=0,
                                   atol=1e-13)
        # [angular; linear]: the linear momentum is m times the centre of mass's velocity
        np.testing.assert_allclose(k.centroidal_momentum[:, 3:], k.mass[:, None] * np.einsum(
            "kij,kj->ki", k.com_jacobian, qd), rtol=0, atol=1e-13)
        np.testing.assert_allclose(k.mass, MASS, rtol=1e-14)


def test_payload_on_a_named_link_is_its_weight(client, solo):
    q = denoc.random_configuration(solo, RNG, 3)
    point, mass = np.array([0.02, 0.01, -0.1]), 0.7
    payload = denoc.Payload(mass=mass, com=point, link="HL_LOWER_LEG")
    plain = client.inverse_dynamics(solo, q)
    k = client.kinematics(solo, q, links=["HL_LOWER_LEG"], point=point, jacobian=True)
    weight = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -9.81 * mass])  # at the point: a force, no moment
    np.testing.assert_allclose(client.inverse_dynamics(solo, q, payload=payload),
                               plain - np.einsum("kji,j->ki", k.jacobian[:, 0], weight), rtol=0, atol=1e-12)
    heavy = client.kinematics(solo, q, center_of_mass=True,
                              payload={"mass": mass, "com": point, "link": "HL_LOWER_LEG"})
    np.testing.assert_allclose(heavy.mass, MASS + mass, rtol=1e-14)
    with client.stream() as s:
        np.testing.assert_allclose(s.inverse_dynamics(solo, q[0], payload=payload),
                                   client.inverse_dynamics(solo, q[0], payload=payload), rtol=0, atol=1e-13)
    np.testing.assert_array_equal(client.inverse_dynamics(solo, q), plain)  # the model is untouched


def test_derivatives_along_the_clients_integrate(client, solo):
    q, qd = states(solo, 1)
    q, qd = q[0], qd[0]
    qdd = RNG.uniform(-1, 1, 18)
    d = client.inverse_dynamics_derivatives(solo, q, qd, qdd)
    fd = tangent_differences(client, solo, q, lambda qs: client.inverse_dynamics(
        solo, qs, np.tile(qd, (len(qs), 1)), np.tile(qdd, (len(qs), 1)))).T
    np.testing.assert_allclose(d.dtau_dq, fd, rtol=0, atol=1e-6)
    # a translation changes nothing: the root's linear columns are zero
    np.testing.assert_allclose(d.dtau_dq[:, 3:6], 0.0, rtol=0, atol=1e-12)


def test_one_semi_implicit_euler_step_is_fd_and_the_clients_integrate(client, models):
    for kind in ("floating", "planar"):
        m = models[kind]
        q, qd = states(m, 3)
        u = RNG.uniform(-1, 1, (3, 1, 12))
        dt = 0.01
        r = client.rollout(m, np.hstack([q, qd]), u, dt=dt, scheme="semi_implicit_euler")
        tau = np.hstack([np.zeros((3, m.nv - 12)), u[:, 0]])
        qd1 = qd + dt * client.forward_dynamics(m, q, qd, tau)
        np.testing.assert_allclose(r.states[:, 1, m.nq:], qd1, rtol=0, atol=1e-13)
        np.testing.assert_allclose(r.states[:, 1, :m.nq], denoc.integrate(m, q, qd1, dt), rtol=0, atol=1e-15)


def test_rollout_linearization_in_the_tangent_space(client, solo):
    q, qd = states(solo, 1)
    x0 = np.concatenate([q[0], 0.3 * qd[0]])
    u = RNG.uniform(-0.5, 0.5, (1, 12))
    dt = 0.01
    r = client.rollout(solo, x0, u, dt=dt, linearize=True)
    nq, nv = solo.nq, solo.nv
    x1 = r.states[1]
    h = 1e-5  # central differences: O(h^2) truncation against rounding / h; 1e-5 is near the best
    E = np.eye(2 * nv)

    def moved(sign):  # x0 moved along the tangent directions: q by integrate, v by addition
        qs = denoc.integrate(solo, x0[:nq], sign * h * E[:, :nv])
        return np.hstack([qs, x0[nq:] + sign * h * E[:, nv:]])

    def error(states):  # the results' differences from x1 in the tangent space
        return np.hstack([denoc.difference(solo, x1[:nq], states[:, :nq]), states[:, nq:] - x1[nq:]])

    plus = error(client.rollout(solo, moved(1), u, dt=dt).states[:, 1])
    minus = error(client.rollout(solo, moved(-1), u, dt=dt).states[:, 1])
    scale = max(1.0, np.abs(r.A).max())  # 30: a light lower leg's velocity row
    np.testing.assert_allclose(r.A[0], (plus - minus).T / (2 * h), rtol=0, atol=2e-8 * scale)
    up = client.rollout(solo, np.tile(x0, (12, 1)), u + h * np.eye(12)[:, None, :], dt=dt).states[:, 1]
    um = client.rollout(solo, np.tile(x0, (12, 1)), u - h * np.eye(12)[:, None, :], dt=dt).states[:, 1]
    np.testing.assert_allclose(r.B[0], (error(up) - error(um)).T / (2 * h), rtol=0,
                               atol=2e-8 * max(1.0, np.abs(r.B).max()))
    np.testing.assert_allclose(np.linalg.norm(r.states[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-15)


def test_batches_above_max_states_are_split(start_server):
    small, whole = start_server("--max-states", "4", store="small"), start_server(store="whole")
    count = 11
    with denoc.Client(small.target) as a, denoc.Client(whole.target) as b:
        m = a.register_urdf(SOLO, root="floating")
        assert b.register_urdf(SOLO, root="floating").model_id == m.model_id and a.max_states() == 4
        q, qd = states(m, count)
        qdd = RNG.uniform(-1, 1, (count, 18))
        wrenches = [("FL_LOWER_LEG", RNG.uniform(-1, 1, (count, 6))), ("base_link", RNG.uniform(-1, 1, 6), "local")]
        payload = denoc.Payload(mass=0.3, com=(0.0, 0.0, 0.05), link="base_link")
        for name, call in {
            "id": lambda c: c.inverse_dynamics(m.model_id, q, qd, qdd, wrenches=wrenches, payload=payload),
            "fd": lambda c: c.forward_dynamics(m, q, qd, qdd, wrenches=wrenches),
            "cholesky": lambda c: c.forward_dynamics(m, q, qd, qdd, route="cholesky"),
            "factor": lambda c: c.full_factor(m, q, qd, bias=True).bias,
        }.items():
            np.testing.assert_array_equal(call(a), call(b), err_msg=name)
        args = dict(links=FEET, jacobian=True, jdot_qd=True, all_frames=True, center_of_mass=True, com_jacobian=True,
                    centroidal=True, centroidal_momentum=True, payload=payload)
        ka, kb = a.kinematics(m, q, qd, **args), b.kinematics(m, q, qd, **args)
        for field in ("rotation", "origin", "jacobian", "jdot_qd", "frame_origins", "com", "mass", "com_jacobian",
                      "centroidal", "centroidal_momentum"):
            np.testing.assert_array_equal(getattr(ka, field), getattr(kb, field), err_msg=field)
        x0, u = np.hstack([q[:5], qd[:5]]), RNG.uniform(-1, 1, (5, 2, 12))
        ra, rb = a.rollout(m, x0, u, dt=0.01, linearize=True), b.rollout(m, x0, u, dt=0.01, linearize=True)
        for field in ("states", "A", "B"):
            np.testing.assert_array_equal(getattr(ra, field), getattr(rb, field), err_msg=field)
        da = a.inverse_dynamics_derivatives(m, q, qd, qdd)
        np.testing.assert_array_equal(da.dtau_dq, b.inverse_dynamics_derivatives(m, q, qd, qdd).dtau_dq)


def test_hostile_shapes_name_their_field(client, solo):
    q = denoc.neutral(solo)
    for norm in (0.0, 1e300):
        bad = q.copy()
        bad[3:7] = [0.0, 0.0, 0.0, norm]
        for field, call in (("q", lambda: client.inverse_dynamics(solo, bad)),
                            ("q", lambda: client.forward_dynamics(solo, bad)),
                            ("q", lambda: client.full_factor(solo, bad)),
                            ("q", lambda: client.kinematics(solo, bad, center_of_mass=True)),
                            ("q", lambda: client.inverse_dynamics_derivatives(solo, bad)),
                            ("x0", lambda: client.rollout(solo, np.concatenate([bad, np.zeros(18)]), np.zeros((1, 12)),
                                                          dt=0.01)),
                            ("q0", lambda: list(client.simulate(solo, bad, t_end=0.1, integrator="rk4")))):
            named = rf"INVALID_ARGUMENT: {field}\[3\.\.6\].*quaternion.*norm"
            with pytest.raises(denoc.InvalidArgumentError, match=named) as e:
                call()
            assert e.value.code.name == "INVALID_ARGUMENT"
        with client.stream() as s, pytest.raises(denoc.InvalidArgumentError, match=r"message 0:.*q\[3\.\.6\]"):
            s.inverse_dynamics(solo, bad)
    with pytest.raises(denoc.InvalidArgumentError, match="quaternion.*norm 0.5"):
        client.inverse_dynamics(solo, np.concatenate([q[:3], [0.0, 0.0, 0.0, 0.5], q[7:]]))
    # nq / nv mismatch: q with nv entries (the client reads nv = 17 from it), qd with nq
    with pytest.raises(denoc.InvalidArgumentError, match=r"dof.*18"):
        client.inverse_dynamics(solo, np.zeros(18), np.zeros(18), np.zeros(18))
    with pytest.raises(denoc.InvalidArgumentError, match="qd"):
        client.inverse_dynamics(solo, q, np.zeros(19), np.zeros(18))
    with pytest.raises(denoc.InvalidArgumentError, match=re.escape("links[1]")) as e:
        client.kinematics(solo, q, links=["FL_LOWER_LEG", "FL_FOOT_TYPO"])
    assert "FL_FOOT_TYPO" in e.value.message
    with pytest.raises(denoc.InvalidArgumentError, match="link"):
        client.kinematics(solo, q, link="nowhere")
    with pytest.raises(denoc.InvalidArgumentError, match=re.escape("wrenches[1].link")):
        client.inverse_dynamics(solo, q, wrenches=[("FL_LOWER_LEG", np.zeros(6)), ("missing_link", np.zeros(6))])
    with pytest.raises(denoc.InvalidArgumentError, match=re.escape("wrenches[0].link")):
        client.forward_dynamics(solo, q, wrenches=[("missing_link", np.zeros(6))])
    with pytest.raises(denoc.InvalidArgumentError, match=re.escape("payload.link")):
        client.inverse_dynamics(solo, q, payload=denoc.Payload(mass=1.0, link="missing_link"))
    with pytest.raises(denoc.InvalidArgumentError, match="wrench"):  # 2 states of wrench for 1 state
        client.inverse_dynamics(solo, q, wrenches=[("FL_LOWER_LEG", np.zeros((2, 6)))])
    with pytest.raises(denoc.InvalidArgumentError, match=re.escape("wrenches[0].wrench")):  # the client's check
        client.inverse_dynamics(solo, q, wrenches=[("FL_LOWER_LEG", np.zeros(5))])
    with pytest.raises(denoc.InvalidArgumentError, match="reference"):
        client.inverse_dynamics(solo, q, wrenches=[("FL_LOWER_LEG", np.zeros(6), "sideways")])
    with client.stream() as s, pytest.raises(denoc.InvalidArgumentError, match=r"message 0:.*wrenches\[0\]\.link"):
        s.inverse_dynamics(solo, q, wrenches=[("missing_link", np.zeros(6))])
    info = client.get_server_info()
    with pytest.raises(denoc.ResourceExhaustedError, match="max_frames"):
        client.kinematics(solo, q, links=["base_link"] * (info.max_frames + 1))
    with pytest.raises((denoc.ResourceExhaustedError, denoc.InvalidArgumentError), match="max_wrenches"):
        client.inverse_dynamics(solo, q, wrenches=[("base_link", np.zeros(6))] * (info.max_wrenches + 1))
    # what a tree does not have: Fixman's route, the operational-space inertia
    with pytest.raises(denoc.InvalidArgumentError, match="FIXMAN"):
        client.forward_dynamics(solo, q, route="fixman")
    with pytest.raises(denoc.InvalidArgumentError, match="lambda"):
        client.kinematics(solo, q, lambda_=True)
    # the adaptive integrator (the default) runs a tree on its manifold: beside RK4 at a small step, the
    # quaternion unit
    dopri = client.simulate_all(solo, q, t_end=0.1, dt_out=0.05, rtol=1e-10, atol=1e-10)
    rk4 = client.simulate_all(solo, q, t_end=0.1, dt_out=0.05, integrator="rk4", step=1e-4)
    assert dopri.q.shape == rk4.q.shape == (3, solo.nq)
    np.testing.assert_allclose(dopri.q, rk4.q, rtol=0, atol=1e-8)
    np.testing.assert_allclose(np.linalg.norm(dopri.q[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-12)
    assert dopri.steps > 0 and abs(dopri.q[-1, 2] - q[2]) > 1e-3  # it moved: the base falls
    with pytest.raises(denoc.InvalidArgumentError, match="root"):
        client.register_urdf(SOLO, root="spherical")
    with pytest.raises(denoc.InvalidArgumentError, match="fixed root"):
        client.register(MODELS / "stanford_arm.json", root="floating")


def test_a_tree_is_registered_again_with_its_root(start_server):
    """The client's source of a floating model carries its root: a server that lost it gets it back as it was
    (same id, same sizes), and a client that only has the id learns the sizes with one GetModel."""
    a, b = start_server(store="a"), start_server("--examples", "false", store="b")
    with denoc.Client(a.target) as ca:
        m = ca.register_urdf(SOLO, root="floating")
        q, qd = states(m, 3)
        tau = ca.inverse_dynamics(m, q, qd)
        sources = ca.model_sources
    with denoc.Client(b.target, model_sources=sources) as cb:
        np.testing.assert_array_equal(cb.inverse_dynamics(m.model_id, q, qd), tau)  # re-registered on b
        again = cb.get_model(m.model_id)
        assert (again.nq, again.nv, again.root, again.frames) == (19, 18, "floating", m.frames)
    with denoc.Client(b.target) as plain:  # knows nothing but the id: qd and qdd default to nv zeros
        zeros = np.zeros((3, 18))
        np.testing.assert_array_equal(plain.inverse_dynamics(m.model_id, q), plain.inverse_dynamics(m, q, zeros, zeros))
        assert plain.rollout(m.model_id, np.hstack([q, qd]), np.zeros((2, 12)), dt=0.01).states.shape == (3, 3, 37)


def test_wrenches_in_derivatives_and_rollouts(client, solo):
    """External wrenches in Derivatives and Rollout, against independent references through the service:
    Derivatives' tau is InverseDynamics' tau with the same wrenches, dtau/dq the central differences of that
    along the client's integrate (a world-axes wrench keeps its axes as its foot moves), and a rollout's first
    semi-implicit Euler step is ForwardDynamics with the same wrenches and the client's integrate."""
    count = 3
    q, qd = states(solo, count)
    qdd = RNG.uniform(-1, 1, (count, 18))
    wrenches = [("FL_FOOT", RNG.uniform(-10, 10, (count, 6))),              # per state, world axes
                ("HR_LOWER_LEG", RNG.uniform(-3, 3, 6), "local"),           # every state, the link's axes
                denoc.LinkWrench("base_link", RNG.uniform(-5, 5, 6))]      # the root link, world axes
    d = client.inverse_dynamics_derivatives(solo, q, qd, qdd, wrenches=wrenches)
    tau = client.inverse_dynamics(solo, q, qd, qdd, wrenches=wrenches)
    np.testing.assert_allclose(d.tau, tau, rtol=0, atol=1e-10 * max(1.0, np.abs(tau).max()))
    plain = client.inverse_dynamics_derivatives(solo, q, qd, qdd)
    assert np.abs(plain.dtau_dq - d.dtau_dq).max() > 1e-3  # the wrenches' own q-dependence is there
    for k in range(count):
        one = [(w[0], w[1][k] if np.ndim(w[1]) == 2 else w[1], *w[2:]) if isinstance(w, tuple) else w
               for w in wrenches]
        fd = tangent_differences(client, solo, q[k], lambda qs: client.inverse_dynamics(
            solo, qs, np.tile(qd[k], (len(qs), 1)), np.tile(qdd[k], (len(qs), 1)), wrenches=one)).T
        np.testing.assert_allclose(d.dtau_dq[k], fd, rtol=0, atol=1e-6 * max(1.0, np.abs(fd).max()))
    f = client.forward_dynamics_derivatives(solo, q, qd, tau, wrenches=wrenches)
    np.testing.assert_allclose(f.qdd, qdd, rtol=0, atol=1e-8)  # FD of ID's torques with the same wrenches

    # a rollout: the wrenches held over it, one per rollout on a foot and one shared
    u = RNG.uniform(-1, 1, (count, 2, 12))
    dt = 0.01
    held = [("FR_FOOT", RNG.uniform(-10, 10, (count, 6))), ("HL_LOWER_LEG", RNG.uniform(-3, 3, 6), "local")]
    r = client.rollout(solo, np.hstack([q, qd]), u, dt=dt, scheme="semi_implicit_euler", wrenches=held,
                       linearize=True)
    torques = np.hstack([np.zeros((count, 6)), u[:, 0]])
    qd1 = qd + dt * client.forward_dynamics(solo, q, qd, torques, wrenches=held)
    # linearized, the rollout's accelerations come by I(q)'s factor, ForwardDynamics' by articulated bodies
    np.testing.assert_allclose(r.states[:, 1, solo.nq:], qd1, rtol=0, atol=1e-11 * max(1.0, np.abs(qd1).max()))
    np.testing.assert_allclose(r.states[:, 1, :solo.nq], denoc.integrate(solo, q, qd1, dt), rtol=0, atol=1e-12)
    bare = client.rollout(solo, np.hstack([q, qd]), u, dt=dt, scheme="semi_implicit_euler")
    assert np.abs(bare.states[:, 1, solo.nq:] - qd1).max() > 1e-3
    assert r.A.shape == (count, 2, 36, 36) and r.B.shape == (count, 2, 36, 12)
    # hostile: a missing link is named, a wrench per rollout of the wrong count refused by its field
    with pytest.raises(denoc.InvalidArgumentError, match="NO_SUCH_FOOT"):
        client.rollout(solo, np.hstack([q, qd]), u, dt=dt, wrenches=[("NO_SUCH_FOOT", np.ones(6))])
    with pytest.raises(denoc.InvalidArgumentError, match=r"wrenches\[0\]\.wrench"):
        client.inverse_dynamics_derivatives(solo, q, qd, qdd, wrenches=[("FL_FOOT", np.full(6, 1e300))])
