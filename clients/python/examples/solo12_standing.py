#!/usr/bin/python3
"""Solo-12 standing and squatting on a floating base: the joint torques and the four foot forces, from denocd.

    /usr/bin/python3 clients/python/examples/solo12_standing.py --server 127.0.0.1:50051 --out /tmp

The quadruped (examples/models/trees/solo12.urdf) is registered with a floating root: q = [x y z | qx qy qz
qw | 12 joints], qd = [w; v | 12 joints] (docs/trees.md). Inverse dynamics without contacts gives, in its
first six entries, the wrench the world would have to apply on the base to move it as asked; standing on its
feet, that wrench must come from the four foot contacts. Their forces f_i (world axes, at the foot points)
enter the base's equations through the feet's Jacobians, tau_root = sum_i J_i[:, root]^T f_i: six equations
in twelve unknowns, solved by least squares (the smallest forces that balance the base). Inverse dynamics
again, with those forces as external wrenches on the feet (LinkWrench on the frames FL_FOOT, ...: URDF links
merged into the lower legs by fixed joints, which the service names as frames), must then give ~0 in the six
base entries: the printed balance residual. Then a squat: the base height moves sinusoidally with the feet
fixed on the ground; the leg joints follow from Newton steps on the foot positions (the service's foot
Jacobians), their velocities and accelerations from the feet's zero velocity and acceleration (J qd = 0,
J qdd + (dJ/dt) qd = 0, the service's (dJ/dt) qd), and the same split gives the torques and forces along it.

Writes solo12_standing.png (and solo12_standing.json with the numbers) to --out.
"""

import json
import os
from pathlib import Path

import numpy as np
from _common import arguments

import denoc

MODELS = Path(os.environ.get("DENOC_MODELS_DIR", Path(__file__).resolve().parents[3] / "examples" / "models"))
MODEL = MODELS / "trees" / "solo12.urdf"
LEGS = ("FL", "FR", "HL", "HR")
FEET = [f"{leg}_FOOT" for leg in LEGS]  # fixed frames: each foot is welded to its lower leg (ModelInfo.frames)
STANCE = {"HFE": 0.8, "KFE": -1.6}  # front legs; the hind legs mirrored (knees bent backwards)


def leg_indices(solo: denoc.ModelInfo, index: str) -> dict:
    """The indices in q (``"q_index"``) or qd (``"v_index"``) of each leg's three joints (HAA, HFE, KFE), from
    the model's joint table."""
    return {leg: [getattr(solo.joint(f"{leg}_{j}"), index) for j in ("HAA", "HFE", "KFE")] for leg in LEGS}


def feet(client, solo, q, qd=None):
    """Per state the four feet's positions (K, 4, 3), the linear rows of their world-axis Jacobians
    (K, 4, 3, nv) and, with qd, (dJ/dt) qd (K, 4, 3): one Kinematics call for the four foot frames."""
    k = client.kinematics(solo, q, qd, links=FEET, reference="world", jacobian=True, jdot_qd=qd is not None)
    return k.origin, k.jacobian[:, :, 3:], None if qd is None else k.jdot_qd[:, :, 3:]


def contact_split(tau, jac):
    """The foot forces (K, 4, 3) that take over the base's six entries of tau (K, nv) by least squares
    (tau_root = sum_i J_i[:, :6]^T f_i) and the joint torques (K, nv - 6) that remain."""
    K = tau.shape[0]
    forces = np.zeros((K, 4, 3))
    joints = np.zeros((K, tau.shape[1] - 6))
    for k in range(K):
        A = np.hstack([jac[k, i][:, :6].T for i in range(4)])  # 6 x 12
        f = np.linalg.lstsq(A, tau[k, :6], rcond=None)[0].reshape(4, 3)
        forces[k] = f
        joints[k] = tau[k, 6:] - sum(jac[k, i][:, 6:].T @ f[i] for i in range(4))
    return forces, joints


def foot_wrenches(forces):
    """The foot forces (K, 4, 3) as external wrenches on the foot frames: [m; f] in world axes, no moment
    about the foot's origin (a point contact), one per state."""
    return [(name, np.hstack([np.zeros_like(forces[:, i]), forces[:, i]]), "world") for i, name in enumerate(FEET)]


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    with denoc.Client(args.server, timeout=120) as client:
        solo = client.register_urdf(MODEL, root="floating", name="solo12 (floating)")
        assert (solo.nq, solo.nv, solo.nu, solo.root) == (19, 18, 12, "floating"), solo
        cols, qcols = leg_indices(solo, "v_index"), leg_indices(solo, "q_index")
        nqr = solo.nq - solo.nu  # 7: the joints' coordinates start here in q (and at 6 in qd)

        # the stance: knees bent, base level; its height puts the feet on the ground (z = 0)
        q0 = denoc.neutral(solo)
        for leg in LEGS:
            sign = 1.0 if leg[0] == "F" else -1.0
            q0[qcols[leg][1]] = sign * STANCE["HFE"]
            q0[qcols[leg][2]] = sign * STANCE["KFE"]
        pos, _, _ = feet(client, solo, q0[None])
        q0[2] = -np.mean(pos[0, :, 2])
        targets, jac0, _ = feet(client, solo, q0[None])
        com = client.kinematics(solo, q0, center_of_mass=True)
        weight = com.mass * abs(solo.gravity[2])

        # (a) standing still: the base wrench of inverse dynamics without contacts, split among the feet
        tau = client.inverse_dynamics(solo, q0[None])
        forces, joints = contact_split(tau, jac0)
        held = client.inverse_dynamics(solo, q0[None], wrenches=foot_wrenches(forces))
        static_residual = float(np.max(np.abs(held[0, :6])))
        assert np.allclose(held[0, 6:], joints[0], rtol=0, atol=1e-9)
        print(f"solo12: {solo.nq} q, {solo.nv} qd, {solo.nu} joints, mass {com.mass:.4f} kg, weight {weight:.4f} N,"
              f" base height {q0[2]:.4f} m")
        print("standing: base wrench without contacts [m; f] =", np.array2string(tau[0, :6], precision=4))
        for i, leg in enumerate(LEGS):
            print(f"  {leg} foot force (world, N): {np.array2string(forces[0, i], precision=4, suppress_small=True)}"
                  f"   joint torques (N m): {np.array2string(joints[0, 3 * i:3 * i + 3], precision=4)}")
        print(f"  sum of the vertical forces {forces[0, :, 2].sum():.6f} N (weight {weight:.6f} N)")
        print(f"  balance residual (max |base entry| with the foot wrenches): {static_residual:.3e}")

        # (b) a squat: base height z0 - A (1 - cos(w t)) / 2, feet fixed; joints by Newton steps on the feet
        T, A, steps = 2.0, 0.05, 201
        t = np.linspace(0.0, T, steps)
        w = 2 * np.pi / T
        z, zd, zdd = q0[2] - A * (1 - np.cos(w * t)) / 2, -A * w * np.sin(w * t) / 2, -A * w * w * np.cos(w * t) / 2
        q = np.tile(q0, (steps, 1))
        q[:, 2] = z
        for _ in range(8):
            pos, jac, _ = feet(client, solo, q)
            err = targets - pos  # (K, 4, 3)
            for i, leg in enumerate(LEGS):
                step = np.linalg.solve(jac[:, i][:, :, cols[leg]], err[:, i][..., None])[..., 0]
                q[:, qcols[leg]] += step
        pos, jac, _ = feet(client, solo, q)
        ik_error = float(np.max(np.abs(pos - targets)))
        base_v, base_a = np.zeros((steps, 6)), np.zeros((steps, 6))
        base_v[:, 5], base_a[:, 5] = zd, zdd  # level base: its axes are the world's
        qd, qdd = np.zeros((steps, solo.nv)), np.zeros((steps, solo.nv))
        qd[:, :6], qdd[:, :6] = base_v, base_a
        for i, leg in enumerate(LEGS):  # J qd = 0 at every foot
            rhs = -np.einsum("kij,kj->ki", jac[:, i][:, :, :6], base_v)
            qd[:, cols[leg]] = np.linalg.solve(jac[:, i][:, :, cols[leg]], rhs[..., None])[..., 0]
        _, _, jdot = feet(client, solo, q, qd)
        for i, leg in enumerate(LEGS):  # J qdd + (dJ/dt) qd = 0 at every foot
            rhs = -np.einsum("kij,kj->ki", jac[:, i][:, :, :6], base_a) - jdot[:, i]
            qdd[:, cols[leg]] = np.linalg.solve(jac[:, i][:, :, cols[leg]], rhs[..., None])[..., 0]
        # the joints' velocities and accelerations against central differences of the Newton solution
        h = t[1] - t[0]
        joints_q = q[:, nqr:]
        fd_v = (joints_q[2:] - joints_q[:-2]) / (2 * h)
        fd_a = (joints_q[2:] - 2 * joints_q[1:-1] + joints_q[:-2]) / h ** 2
        v_check = float(np.max(np.abs(fd_v - qd[1:-1, 6:])))
        a_check = float(np.max(np.abs(fd_a - qdd[1:-1, 6:])))

        tau = client.inverse_dynamics(solo, q, qd, qdd)
        forces_t, joints_t = contact_split(tau, jac)
        held = client.inverse_dynamics(solo, q, qd, qdd, wrenches=foot_wrenches(forces_t))
        squat_residual = float(np.max(np.abs(held[:, :6])))
        joint_check = float(np.max(np.abs(held[:, 6:] - joints_t)))
        com_t = client.kinematics(solo, q, center_of_mass=True).com
        # Newton on the centre of mass: sum of the vertical forces = m (g + zdd_com)
        com_acc = np.gradient(np.gradient(com_t[:, 2], h), h)
        lift = com.mass * (abs(solo.gravity[2]) + com_acc[2:-2])
        newton = float(np.max(np.abs(forces_t[2:-2, :, 2].sum(axis=1) - lift)))
        print(f"squat: {steps} states over {T} s, base height {z.min():.4f}..{z.max():.4f} m; foot position error "
              f"after Newton {ik_error:.2e} m")
        print(f"  joint velocities and accelerations against central differences: {v_check:.2e} rad/s, "
              f"{a_check:.2e} rad/s^2 (h = {h:.3f} s)")
        print(f"  vertical forces sum - m (g + com z acceleration): {newton:.2e} N (finite differences)")
        print(f"  largest |joint torque| {np.max(np.abs(joints_t)):.4f} N m, vertical foot forces "
              f"{forces_t[:, :, 2].min():.4f}..{forces_t[:, :, 2].max():.4f} N")
        print(f"  balance residual along the squat: {squat_residual:.3e} (joint torques vs the split: "
              f"{joint_check:.1e})")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    axes[0].plot(t, z, color="k")
    axes[0].set_ylabel("base height (m)")
    names = [j.name for j in solo.joints[1:]]
    for c in range(12):
        axes[1].plot(t, joints_t[:, c], label=names[c], lw=1, ls=("-", "--", ":")[c % 3])
    axes[1].set_ylabel("joint torque (N m)")
    axes[1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for i, leg in enumerate(LEGS):
        axes[2].plot(t, forces_t[:, i, 2], label=f"{leg} f_z")
        axes[2].plot(t, forces_t[:, i, 0], ls=":", label=f"{leg} f_x")
    axes[2].set_ylabel("foot force (N)")
    axes[2].set_xlabel("t (s)")
    axes[2].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"Solo-12 squatting on a floating base, from denocd (balance residual {squat_residual:.1e})")
    fig.tight_layout()
    out = Path(args.out) / "solo12_standing.png"
    fig.savefig(out, dpi=120)
    summary = {"mass": com.mass, "weight": weight, "base_height": q0[2], "static_foot_forces": forces[0].tolist(),
               "static_joint_torques": joints[0].tolist(), "static_balance_residual": static_residual,
               "squat_balance_residual": squat_residual, "ik_error": ik_error, "velocity_check": v_check,
               "acceleration_check": a_check, "newton_check": newton, "joint_check": joint_check}
    (Path(args.out) / "solo12_standing.json").write_text(json.dumps(summary, indent=1))
    print(f"{out}: torques and foot forces along the squat")


if __name__ == "__main__":
    main()
