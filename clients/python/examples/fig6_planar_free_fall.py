#!/usr/bin/python3
"""Fig. 6 of Saha 1999: the 3-DOF planar arm falling freely from rest at theta = 0 for 10 s, simulated by
denocd (adaptive Dormand-Prince 5(4), samples every 10 ms streamed in batches), with its energies.

    /usr/bin/python3 clients/python/examples/fig6_planar_free_fall.py --server 127.0.0.1:50051 --out /tmp

The arm's dimensions are ours (the paper gives none): examples/models/planar_3r.json.
"""

from pathlib import Path

import numpy as np
from _common import arguments

import denoc


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    ts, qs, energies = [], [], []
    with denoc.Client(args.server, timeout=120) as client:
        arm = client.find_model("planar_3r")  # built into denocd
        for batch in client.simulate(arm, np.zeros(3), np.zeros(3), t_end=10.0, dt_out=0.01, rtol=1e-10,
                                     atol=1e-10):
            ts.append(batch.t)
            qs.append(batch.q)
            energies.append(np.column_stack([batch.kinetic, batch.potential, batch.energy]))
            if batch.last:
                steps, rejected = batch.steps, batch.rejected_steps
    t, q, e = np.concatenate(ts), np.concatenate(qs), np.concatenate(energies)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for j in range(3):
        axes[0].plot(t, np.degrees(q[:, j]), label=f"theta {j + 1}")
    axes[0].set_ylabel("joint angle (deg)")
    axes[0].legend(fontsize=8)
    for k, name in enumerate(("kinetic", "potential", "total")):
        axes[1].plot(t, e[:, k], label=name)
    axes[1].set_ylabel("energy (J)")
    axes[1].set_xlabel("t (s)")
    axes[1].legend(fontsize=8)
    fig.suptitle("Planar 3R arm in free fall (Saha 1999, Fig. 6), from denocd")
    out = Path(args.out) / "fig6_planar_free_fall.png"
    fig.savefig(out, dpi=120)
    drift = np.max(np.abs(e[:, 2] - e[0, 2])) / np.max(e[:, 0])
    print(f"{out}: {len(t)} samples, {steps} steps ({rejected} rejected), "
          f"energy drift {drift:.2e} of the largest kinetic energy")


if __name__ == "__main__":
    main()
