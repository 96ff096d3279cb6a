#!/usr/bin/python3
"""States per second of batched inverse dynamics through the Python client, as client_throughput.cpp does.

Usage: client_throughput.py HOST:PORT URDF [ROUNDS]  (the installed package; see client_throughput.sh)
"""
import sys
import time

import numpy as np

import denoc


def main():
    target, urdf = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    count, dof, calls = 1000, 7, 20
    with denoc.Client(target) as client:
        model = client.register_urdf(urdf)
        rng = np.random.default_rng(1)
        q, qd, qdd = (rng.uniform(-1, 1, (count, dof)) for _ in range(3))
        client.inverse_dynamics(model, q, qd, qdd)  # warm up
        for r in range(rounds):
            seconds = []
            for _ in range(calls):
                start = time.perf_counter()
                client.inverse_dynamics(model, q, qd, qdd)
                seconds.append(time.perf_counter() - start)
            seconds.sort()
            median = seconds[len(seconds) // 2]
            print(f"python round {r + 1}: median {count / median:.0f} states/s ({median * 1e3:.2f} ms/call), "
                  f"best {count / seconds[0]:.0f} states/s")


if __name__ == "__main__":
    main()
