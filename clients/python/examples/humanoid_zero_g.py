#!/usr/bin/python3
"""A humanoid tumbling in zero gravity: momentum and energy held along denocd's RK4 rollout.

    /usr/bin/python3 clients/python/examples/humanoid_zero_g.py --server 127.0.0.1:50051 --out /tmp

examples/models/trees/simple_humanoid.urdf is registered with a floating root and gravity (0, 0, 0). From a
non-zero velocity (the base spinning and drifting, every joint moving) with zero joint torques it moves
freely: nothing acts on it, so its linear momentum and its angular momentum about the centre of mass (the
centroidal momentum A_G(q) qd, from the service's Kinematics) and its kinetic energy 1/2 qd^T M(q) qd (M from
FullFactor) must stay constant. The rollout (RK4 on the configuration manifold, the quaternion kept unit) is
checked by how well they do, at two step sizes: RK4's error is fourth order, so halving dt divides the
drift by about 16. The linear momentum is also checked as m J_com qd (the centre of mass's Jacobian).

Writes humanoid_zero_g.png (and humanoid_zero_g.json with the numbers) to --out.
"""

import json
import os
from pathlib import Path

import numpy as np
from _common import arguments

import denoc

MODELS = Path(os.environ.get("DENOC_MODELS_DIR", Path(__file__).resolve().parents[3] / "examples" / "models"))
MODEL = MODELS / "trees" / "simple_humanoid.urdf"
DURATION = 1.0  # s


def drift(values: np.ndarray) -> float:
    """The largest change of a conserved vector (or scalar) along the motion, relative to its size."""
    values = values.reshape(len(values), -1)
    return float(np.max(np.linalg.norm(values - values[0], axis=1)) / np.linalg.norm(values[0]))


def run(client, body, x0, dt):
    """One RK4 rollout of DURATION with zero torques; (t, states, centroidal momentum, energy, com, mass)."""
    steps = int(round(DURATION / dt))
    r = client.rollout(body, x0, np.zeros((steps, body.nu)), dt=dt, scheme="rk4")
    q, qd = r.states[:, :body.nq], r.states[:, body.nq:]
    k = client.kinematics(body, q, qd, center_of_mass=True, com_jacobian=True, centroidal_momentum=True)
    inertia = client.full_factor(body, q).inertia
    energy = 0.5 * np.einsum("ki,kij,kj->k", qd, inertia, qd)
    linear_from_com = k.mass[:, None] * np.einsum("kij,kj->ki", k.com_jacobian, qd)
    return dict(t=np.arange(steps + 1) * dt, q=q, h=k.centroidal_momentum, energy=energy, com=k.com,
                mass=float(k.mass[0]), linear_from_com=linear_from_com)


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    rng = np.random.default_rng(2024)
    with denoc.Client(args.server, timeout=300) as client:
        body = client.register_urdf(MODEL, root="floating", gravity=(0.0, 0.0, 0.0),
                                    name="simple humanoid (floating, zero g)")
        q0 = denoc.neutral(body)
        q0[:3] = (0.1, -0.2, 1.0)
        q0[3:7] = denoc.integrate("floating", q0[:7], [0.3, -0.2, 0.5, 0, 0, 0])[3:7]  # a tilted base
        q0[body.nq - body.nu:] += rng.uniform(-0.3, 0.3, body.nu)
        qd0 = np.concatenate([[0.8, -0.5, 1.2, 0.3, 0.1, -0.2], rng.uniform(-1.0, 1.0, body.nu)])
        x0 = np.concatenate([q0, qd0])
        runs = {dt: run(client, body, x0, dt) for dt in (2e-3, 1e-3)}
    fine = runs[1e-3]
    result = {}
    print(f"simple humanoid: {body.nq} q, {body.nv} qd, {body.nu} joints, depth {body.depth}, "
          f"mass {fine['mass']:.4f} kg,"
          f" gravity {body.gravity.tolist()}")
    for dt, r in runs.items():
        lin, ang, e = drift(r["h"][:, 3:]), drift(r["h"][:, :3]), drift(r["energy"])
        result[f"{dt:g}"] = {"linear": lin, "angular": ang, "energy": e}
        print(f"RK4 dt = {dt:g} s, {len(r['t']) - 1} steps: relative drift of the linear momentum {lin:.2e}, of the "
              f"angular momentum about the centre of mass {ang:.2e}, of the kinetic energy {e:.2e}")
    coarse = result["0.002"]
    ratio = coarse["energy"] / max(result["0.001"]["energy"], 1e-300)
    h0 = fine["h"][0]
    com_velocity = fine["h"][:, 3:] / fine["mass"]
    com_check = float(np.max(np.abs(fine["com"] - (fine["com"][0] + np.outer(fine["t"], com_velocity[0])))))
    linear_check = float(np.max(np.abs(fine["linear_from_com"] - fine["h"][:, 3:])) / np.linalg.norm(h0[3:]))
    print(f"  momentum h_G = [angular; linear] = {np.array2string(h0, precision=5)}, kinetic energy "
          f"{fine['energy'][0]:.6f} J")
    print(f"  energy drift ratio dt 2e-3 / 1e-3: {ratio:.1f} (fourth order: 16)")
    print(f"  the centre of mass moves in a straight line at h_lin / m: {com_check:.2e} m off; "
          f"m J_com qd vs h_lin: {linear_check:.2e}")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = fine["t"]
    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    for c, name in enumerate(("x", "y", "z")):
        axes[0].plot(t, fine["h"][:, 3 + c] - h0[3 + c], label=f"p_{name} - p_{name}(0)")
        axes[1].plot(t, fine["h"][:, c] - h0[c], label=f"L_{name} - L_{name}(0)")
    axes[0].set_ylabel("linear momentum\nchange (kg m/s)")
    axes[1].set_ylabel("angular momentum\nchange (kg m^2/s)")
    axes[2].plot(t, fine["energy"] - fine["energy"][0], color="k", label="dt = 1e-3")
    axes[2].plot(runs[2e-3]["t"], runs[2e-3]["energy"] - runs[2e-3]["energy"][0], color="r", ls=":",
                 label="dt = 2e-3")
    axes[2].set_ylabel("kinetic energy\nchange (J)")
    axes[2].set_xlabel("t (s)")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    fig.suptitle(f"Simple humanoid in zero gravity (RK4 on the manifold), energy drift {result['0.001']['energy']:.1e}")
    fig.tight_layout()
    out = Path(args.out) / "humanoid_zero_g.png"
    fig.savefig(out, dpi=120)
    summary = {"drift": result, "energy_ratio": ratio, "com_check": com_check, "linear_check": linear_check,
               "mass": fine["mass"], "energy": float(fine["energy"][0]), "momentum": h0.tolist()}
    (Path(args.out) / "humanoid_zero_g.json").write_text(json.dumps(summary, indent=1))
    print(f"{out}: momentum and energy along the motion")


if __name__ == "__main__":
    main()
