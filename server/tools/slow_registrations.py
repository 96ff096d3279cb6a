#!/usr/bin/python3
"""slow_registrations: N registrations of a URDF that takes long to parse (a comb of fixed links) sent to a
denocd at once, while health checks run back to back; prints the health checks' latency while the
registrations run, then the registrations' status codes. Timing only (python3-grpcio, raw bytes).

    slow_registrations.py --port P [--registrations N] [--fixed-links K]
"""
import argparse
import threading
import time

import grpc
from protowire import field_bytes


def comb(links):
    """A URDF whose one revolute joint carries a comb of fixed links (each with a fixed leaf)."""
    inertial = ("<inertial><mass value='1'/><inertia ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'/>"
                "</inertial>")
    out = ["<robot name='comb'>", "<link name='base'>%s</link>" % inertial, "<link name='arm'>%s</link>" % inertial,
           "<joint name='j' type='revolute'><parent link='base'/><child link='arm'/><axis xyz='0 0 1'/>"
           "<limit lower='-1' upper='1' effort='1' velocity='1'/></joint>"]
    prev = "arm"
    for i in range(links):
        out.append("<link name='f%d'>%s</link>" % (i, inertial))
        out.append("<joint name='jf%d' type='fixed'><parent link='%s'/><child link='f%d'/>"
                   "<origin xyz='0.001 0 0'/></joint>" % (i, prev, i))
        out.append("<link name='l%d'>%s</link>" % (i, inertial))
        out.append("<joint name='jl%d' type='fixed'><parent link='f%d'/><child link='l%d'/></joint>" % (i, i, i))
        prev = "f%d" % i
    out.append("</robot>")
    return "\n".join(out).encode()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--registrations", type=int, default=4)
    p.add_argument("--fixed-links", type=int, default=6000)
    a = p.parse_args()
    text = comb(a.fixed_links)
    target = "127.0.0.1:%d" % a.port
    options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    codes = []
    lock = threading.Lock()

    def register(k):
        # each its own model (the tip differs), each its own connection
        channel = grpc.insecure_channel(target, options=options + [("denoc.probe", k)])
        call = channel.unary_unary("/denoc.v1.Dynamics/RegisterModel")
        req = field_bytes(1, field_bytes(1, text) + field_bytes(3, b"l%d" % (a.fixed_links - 1 - k)))
        try:
            call(req, timeout=300)
            code = "OK"
        except grpc.RpcError as e:
            code = e.code().name
        with lock:
            codes.append(code)

    health = grpc.insecure_channel(target).unary_unary("/grpc.health.v1.Health/Check")
    health(b"", timeout=10)
    threads = [threading.Thread(target=register, args=(k,)) for k in range(a.registrations)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    latencies = []
    while any(t.is_alive() for t in threads):
        s = time.monotonic()
        health(b"", timeout=30)
        latencies.append(time.monotonic() - s)
        time.sleep(0.005)
    elapsed = time.monotonic() - t0
    latencies.sort()
    if latencies:
        def at(q):
            return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3
        print("health p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d checks in %.1f s)" %
              (at(0.5), at(0.99), latencies[-1] * 1e3, len(latencies), elapsed))
    print("%d registrations in %.1f s: %s" % (a.registrations, elapsed, " ".join(sorted(codes))))


if __name__ == "__main__":
    main()
