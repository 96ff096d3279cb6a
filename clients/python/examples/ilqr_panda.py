#!/usr/bin/env python3
"""iLQR on the service: drive the Panda's hand (panda_hand_tcp) from a start configuration to a target
position in 0.6 s within a torque budget (30 % of the joint effort limits), using only denocd: Rollout with
per-step linearizations (A_t, B_t) for the backward pass, one-step Rollout calls of every line-search
candidate at once for the closed-loop forward pass, and Kinematics (pose and Jacobian of the hand) for the
terminal cost.

Cost: sum_t 1/2 w_u |u_t - u_hold|^2 + 1/2 w_v |qd_t|^2 dt, plus 1/2 w_p |p(q_T) - p*|^2 + 1/2 w_vT |qd_T|^2 at
the end (u_hold: the torques that hold the start still, p: the hand's position). The backward pass is the
Gauss-Newton iLQR of Li & Todorov (2004) with Levenberg-Marquardt regularization; torques are clamped to
the budget in the forward pass (the gains of clamped joints dropped).

Writes ilqr_panda.png (cost per iteration, joint torques of the final plan) and prints a JSON summary
(iterations, final distance, cost) on stdout.
"""

import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import arguments  # noqa: E402

import denoc  # noqa: E402

# the robot files: $DENOC_MODELS_DIR, else the repository's examples/models
MODELS = Path(os.environ.get("DENOC_MODELS_DIR") or HERE.parents[2] / "examples" / "models")
TIP = "panda_hand_tcp"
Q_START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
TARGET = np.array([0.45, 0.25, 0.35])  # m, base frame
T, DT = 30, 0.02  # 0.6 s
W_U, W_V, W_P, W_VT = 1e-4, 1e-2, 4e3, 10.0
ALPHAS = np.array([1.0, 0.5, 0.25, 0.1, 0.03])
MAX_ITERATIONS, TOLERANCE = 60, 1e-6
TORQUE_FRACTION = 0.3  # of the effort limits: the box the torques are kept in


def terminal(client, model, q):
    """Hand positions and their Jacobians (linear rows) at the rows of q."""
    k = client.kinematics(model, np.atleast_2d(q), jacobian=True)
    return k.origin, k.jacobian[:, 3:, :]


def cost(client, model, xs, us, u_hold, n):
    """The total cost of trajectories xs (K, T + 1, 2n) under us (K, T, n)."""
    running = (0.5 * W_U * np.sum((us - u_hold) ** 2, axis=(1, 2))
               + 0.5 * W_V * DT * np.sum(xs[:, :-1, n:] ** 2, axis=(1, 2)))
    p, _ = terminal(client, model, xs[:, -1, :n])
    return running + 0.5 * W_P * np.sum((p - TARGET) ** 2, axis=1) + 0.5 * W_VT * np.sum(xs[:, -1, n:] ** 2, axis=1)


def backward(client, model, xs, us, u_hold, A, B, mu, lo, hi, n):
    """Gains k_t, K_t of the Gauss-Newton backward pass, and the expected decrease; None if not descent."""
    p, J = terminal(client, model, xs[-1, :n])
    Vx = np.concatenate([W_P * J[0].T @ (p[0] - TARGET), W_VT * xs[-1, n:]])
    Vxx = np.zeros((2 * n, 2 * n))
    Vxx[:n, :n] = W_P * J[0].T @ J[0]
    Vxx[n:, n:] = W_VT * np.eye(n)
    ks, Ks, expected = np.zeros((T, n)), np.zeros((T, n, 2 * n)), 0.0
    for t in reversed(range(T)):
        lx = np.concatenate([np.zeros(n), W_V * DT * xs[t, n:]])
        lu = W_U * (us[t] - u_hold)
        lxx = np.diag(np.concatenate([np.zeros(n), np.full(n, W_V * DT)]))
        Qx, Qu = lx + A[t].T @ Vx, lu + B[t].T @ Vx
        Qxx = lxx + A[t].T @ Vxx @ A[t]
        Quu = W_U * np.eye(n) + B[t].T @ (Vxx + mu * np.eye(2 * n)) @ B[t]
        Qux = B[t].T @ (Vxx + mu * np.eye(2 * n)) @ A[t]
        try:
            L = np.linalg.cholesky(Quu)
        except np.linalg.LinAlgError:
            return None
        k = -np.linalg.solve(L.T, np.linalg.solve(L, Qu))
        K = -np.linalg.solve(L.T, np.linalg.solve(L, Qux))
        clamped = ((us[t] <= lo) & (k < 0)) | ((us[t] >= hi) & (k > 0))
        K[clamped] = 0.0
        ks[t], Ks[t] = k, K
        expected += k @ Qu
        Vx = Qx + K.T @ Quu @ k + K.T @ Qu + Qux.T @ k
        Vxx = Qxx + K.T @ Quu @ K + K.T @ Qux + Qux.T @ K
        Vxx = 0.5 * (Vxx + Vxx.T)
    return ks, Ks, expected


def forward(client, model, xs, us, ks, Ks, lo, hi, n):
    """Closed-loop rollouts of every line-search step at once: u_t = u_t + a k_t + K_t (x_t - xs_t)."""
    count = len(ALPHAS)
    new_x = np.zeros((count, T + 1, 2 * n))
    new_u = np.zeros((count, T, n))
    new_x[:, 0] = xs[0]
    for t in range(T):
        u = us[t] + ALPHAS[:, None] * ks[t] + (new_x[:, t] - xs[t]) @ Ks[t].T
        new_u[:, t] = np.clip(u, lo, hi)
        new_x[:, t + 1] = client.rollout(model, new_x[:, t], new_u[:, t, None, :], dt=DT).states[:, 1]
    return new_x, new_u


def main() -> int:
    args = arguments("iLQR for the Panda's hand through denocd (rollouts with linearizations)")
    with denoc.Client(args.server) as client:
        model = client.register_urdf(MODELS / "panda_hand.urdf", tip_link=TIP)
        n = model.dof
        # the torque budget: a fraction of the model's effort limits (the Panda's: 87 N m, 12 N m at the wrist)
        hi = TORQUE_FRACTION * np.where(np.isfinite(model.effort_limit), model.effort_limit, 100.0)
        lo = -hi
        u_hold = client.inverse_dynamics(model, Q_START)  # holds the start still
        us = np.clip(np.tile(u_hold, (T, 1)), lo, hi)
        x0 = np.concatenate([Q_START, np.zeros(n)])
        xs = client.rollout(model, x0, us, dt=DT).states
        J = cost(client, model, xs[None], us[None], u_hold, n)[0]
        costs, mu, iterations = [J], 1e-6, 0
        for iterations in range(1, MAX_ITERATIONS + 1):
            lin = client.rollout(model, x0, us, dt=DT, linearize=True)
            step = backward(client, model, xs, us, u_hold, lin.A, lin.B, mu, lo, hi, n)
            if step is None:
                mu *= 10.0
                continue
            ks, Ks, expected = step
            cand_x, cand_u = forward(client, model, xs, us, ks, Ks, lo, hi, n)
            cand = cost(client, model, cand_x, cand_u, u_hold, n)
            best = int(np.argmin(cand))
            if cand[best] < J:
                improvement = J - cand[best]
                xs, us, J = cand_x[best], cand_u[best], cand[best]
                costs.append(J)
                mu = max(mu / 4.0, 1e-9)
                if improvement < TOLERANCE * max(1.0, J):
                    break
            else:
                mu *= 10.0
                if mu > 1e6:
                    break
        p, _ = terminal(client, model, xs[-1, :n])
        distance = float(np.linalg.norm(p[0] - TARGET))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.semilogy(range(len(costs)), costs, marker="o")
    a.set_xlabel("accepted iteration")
    a.set_ylabel("cost")
    a.set_title("iLQR on denocd: cost")
    t = np.arange(T) * DT
    for j in range(n):
        b.step(t, us[:, j], where="post", label=f"joint {j + 1}")
    b.set_xlabel("t (s)")
    b.set_ylabel("torque (N m)")
    b.set_title(f"final plan: hand {distance * 1000:.1f} mm from the target")
    b.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    out = Path(args.out) / "ilqr_panda.png"
    fig.savefig(out, dpi=100)
    print(json.dumps({"iterations": iterations, "accepted": len(costs) - 1, "final_distance_m": distance,
                      "initial_cost": costs[0], "final_cost": J, "max_abs_torque_over_limit":
                      float(np.max(np.abs(us) / hi)), "plot": str(out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
