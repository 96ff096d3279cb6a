#!/usr/bin/python3
"""A planner's use of denocd: a whole candidate trajectory of the Panda evaluated in one batched call.

A quintic rest-to-rest joint trajectory (2000 states) is checked against the model's effort limits: one
inverse_dynamics call returns every torque, one full_factor call the inertia matrices along the path
(here used for the largest effective inertia). The Panda is registered from its URDF (an idempotent call:
the id is a content address, so every planner process gets the same id).

    /usr/bin/python3 clients/python/examples/planner_trajectory.py --server 127.0.0.1:50051 --out /tmp
"""

import time
from pathlib import Path

import numpy as np
from _common import arguments

import denoc

PANDA = Path(__file__).resolve().parents[3] / "examples" / "models" / "panda.urdf"


def quintic(q0: np.ndarray, q1: np.ndarray, T: float, count: int):
    """Rest-to-rest quintic from q0 to q1 in T seconds: t, q, qd, qdd."""
    t = np.linspace(0.0, T, count)
    s = t / T
    blend = (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None]
    dblend = ((30 * s**2 - 60 * s**3 + 30 * s**4) / T)[:, None]
    ddblend = ((60 * s - 180 * s**2 + 120 * s**3) / T**2)[:, None]
    d = q1 - q0
    return t, q0 + d * blend, d * dblend, d * ddblend


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    q0 = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    q1 = np.array([1.2, 0.3, -0.5, -1.2, 0.4, 2.2, -0.3])
    with denoc.Client(args.server, timeout=30) as client:
        panda = client.register_urdf(PANDA)
        for T in (3.0, 1.5, 0.8):  # ever faster candidates
            t, q, qd, qdd = quintic(q0, q1, T, 2000)
            start = time.perf_counter()
            tau = client.inverse_dynamics(panda, q, qd, qdd)  # (2000, 7) in one call
            elapsed = time.perf_counter() - start
            usage = np.max(np.abs(tau), axis=0) / panda.effort_limit
            factor = client.full_factor(panda, q)
            print(f"T = {T:.1f} s: {len(t)} states in {elapsed * 1e3:.1f} ms; peak effort "
                  f"{np.max(usage) * 100:.0f}% of the limit (joint {np.argmax(usage) + 1}); "
                  f"max eigenvalue of I(q) {np.max(np.linalg.eigvalsh(factor.inertia)):.3f} kg m^2 -> "
                  f"{'feasible' if np.all(usage <= 1) else 'infeasible'}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for j in range(7):
        ax.plot(t, tau[:, j] / panda.effort_limit[j], label=f"joint {j + 1}")
    ax.axhline(1.0, color="k", lw=0.5)
    ax.axhline(-1.0, color="k", lw=0.5)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("tau / effort limit")
    ax.set_title(f"Panda, quintic trajectory in {T} s: torques from one batched call")
    ax.legend(ncol=4, fontsize=7)
    out = Path(args.out) / "planner_trajectory.png"
    fig.savefig(out, dpi=120)
    print(out)


if __name__ == "__main__":
    main()
