#!/usr/bin/python3
"""Fig. 8 of Saha 1999: the Stanford arm's joint torques along the trajectory of eq. 39, from a running
denocd. The trajectory is built in numpy and evaluated in one batched inverse_dynamics call.

    /usr/bin/python3 clients/python/examples/fig8_stanford_torques.py --server 127.0.0.1:50051 --out /tmp

eq. 39 (the scaled reading of docs/design.md): theta_i(t) = theta_i(0) + (theta_i(T) - theta_i(0)) / (2 pi)
(2 pi t / T - sin(2 pi t / T)), T = 10 s; revolute joints from 0 to 60 deg (joint 2 from 90 deg), the
prismatic joint 3 from 0 to 0.1 m.
"""

from pathlib import Path

import numpy as np
from _common import arguments

import denoc


def eq39(t: np.ndarray, T: float = 10.0):
    """q, qd, qdd (len(t), 6) of the Stanford arm along eq. 39."""
    start = np.radians([0.0, 90.0, 0.0, 0.0, 0.0, 0.0])
    end = np.radians([60.0, 60.0, 0.0, 60.0, 60.0, 60.0])
    start[2], end[2] = 0.0, 0.1  # the prismatic joint, m
    delta = end - start
    w = 2.0 * np.pi / T
    s = (w * t - np.sin(w * t))[:, None]
    q = start + delta / (2.0 * np.pi) * s
    qd = delta / T * (1.0 - np.cos(w * t))[:, None]
    qdd = delta / T * w * np.sin(w * t)[:, None]
    return q, qd, qdd


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    t = np.linspace(0.0, 10.0, 1001)
    q, qd, qdd = eq39(t)
    with denoc.Client(args.server, timeout=30) as client:
        arm = client.find_model("stanford_arm")  # built into denocd (examples/models/stanford_arm.json)
        tau = client.inverse_dynamics(arm, q, qd, qdd)  # (1001, 6): one call for the whole trajectory
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    axes[0].plot(t, tau[:, 1], color="tab:orange", label="joint 2")
    axes[0].set_ylabel("torque (N m)")
    axes[1].plot(t, tau[:, 2], color="k", label="joint 3 (prismatic)")
    axes[1].set_ylabel("force (N)")
    for j in (0, 3, 4, 5):  # the small torques of the base joint and the wrist
        axes[2].plot(t, tau[:, j], label=f"joint {j + 1}")
    axes[2].set_ylabel("torque (N m)")
    axes[2].set_xlabel("t (s)")
    for ax in axes:
        ax.legend(ncol=4, fontsize=8)
    fig.suptitle("Stanford arm along eq. 39 (Saha 1999, Fig. 8), from denocd")
    out = Path(args.out) / "fig8_stanford_torques.png"
    fig.savefig(out, dpi=120)
    print(f"{out}: {len(t)} states in one call; max |tau| per joint: "
          + ", ".join(f"{v:.4g}" for v in np.max(np.abs(tau), axis=0)))


if __name__ == "__main__":
    main()
