"""Calls spread over a fleet by default: three denocd replicas sharing one store behind one ipv4: target.

With no channel option the client uses round_robin for such a target (each replica answers some of 30 calls,
counted by its own metrics); with grpc.lb_policy_name pick_first every call goes to one replica.
"""
import re
import urllib.request

import numpy as np

import denoc


def _ok_calls(port: int) -> float:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    m = re.search(r'^denoc_requests_total\{code="OK",rpc="InverseDynamics"\} (\S+)$', body, re.M)
    return float(m.group(1)) if m else 0.0


def test_calls_spread_over_replicas_by_default(start_server, tmp_path):
    replicas, ports = [], []
    for i in range(3):
        port_file = tmp_path / f"metrics{i}"
        replicas.append(start_server("--metrics-listen", "127.0.0.1:0", "--metrics-port-file", str(port_file)))
        ports.append(int(port_file.read_text().strip()))
    target = "ipv4:" + ",".join(r.target for r in replicas)
    q = np.full((1, 3), 0.2)
    for options, spread_over in (((), 3), ((("grpc.lb_policy_name", "pick_first"),), 1)):
        with denoc.Client(target, timeout=10, options=options) as client:
            arm = client.find_model("planar_3r")
            before = [_ok_calls(p) for p in ports]
            for _ in range(30):
                client.inverse_dynamics(arm, q, np.zeros_like(q), np.zeros_like(q))
            calls = [_ok_calls(p) - b for p, b in zip(ports, before)]
        assert sum(calls) == 30, calls
        assert sum(1 for c in calls if c > 0) == spread_over, (options, calls)
