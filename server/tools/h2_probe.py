#!/usr/bin/python3
"""h2_probe: a raw HTTP/2 client for checking what denocd's transport allows (python3-h2's hpack and
hyperframe; frames written by hand, so the client can do what a well-behaved gRPC client never would).

    h2_probe.py settings     --port P                      the server's SETTINGS as JSON
    h2_probe.py gzip         --port P [--calls K] [--inflated-mb X]
          K InverseDynamics calls whose message is a gzip bomb (X MiB of zeros, a few KiB on the wire)
    h2_probe.py flagged      --port P [--calls K]          messages marked compressed under identity encoding
    h2_probe.py unauth       --port P [--calls K] [--mb X] K calls without a token, each with X MiB of body
    h2_probe.py header-flood --port P [--streams N]        N header-only calls on one connection, ignoring the
                                                           server's MAX_CONCURRENT_STREAMS
    h2_probe.py rapid-reset  --port P [--streams N]        N x (HEADERS, DATA, RST_STREAM) on one connection
    h2_probe.py stall        --port P --model ID --dof N [--calls M] [--hold S]
          M Simulate calls on a connection that grants no flow-control window (SETTINGS_INITIAL_WINDOW_SIZE
          0): the server cannot send a byte of any answer. Prints "stalled" once they are open, then holds
          the connection S seconds (or until the server has ended every call).
    h2_probe.py idle         --port P [--calls M] [--hold S] [--path P]
          M calls of P (default /denoc.v1.Dynamics/Stream) that send nothing, held S seconds
    h2_probe.py continuation --port P [--mb X]
          HEADERS of a GetModel call without END_HEADERS, then CONTINUATION frames of 16 kB literals until X MiB
          of header block are sent or the server ends the connection (an endless header block)
    h2_probe.py half-sent    --port P [--calls M] [--mb X] [--hold S]
          M calls at once announcing X MiB each, sending half of each as the server's windows allow, S seconds

Every command takes --tls-ca CA --tls-cert CRT --tls-key KEY to speak TLS (ALPN h2, the name localhost) with
a client certificate, e.g. to the front (deploy/nginx), and --source ADDR to connect from a local address.
Every command prints one JSON object: the grpc-status values seen (by code), streams reset by the server,
GOAWAY, bytes sent, seconds taken. Timing is reported, never judged: the tests judge counts and sizes.
"""
import argparse
import gzip
import json
import select
import socket
import ssl
import struct
import sys
import time

import hpack
from protowire import field_bytes, field_double, field_varint, packed_doubles
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTING_NAMES = {1: "HEADER_TABLE_SIZE", 2: "ENABLE_PUSH", 3: "MAX_CONCURRENT_STREAMS", 4: "INITIAL_WINDOW_SIZE",
                 5: "MAX_FRAME_SIZE", 6: "MAX_HEADER_LIST_SIZE", 0xFE03: "GRPC_ALLOW_TRUE_BINARY_METADATA"}


# ------------------------------------------------------------------------------------------ protobuf bytes

def grpc_frame(message, compressed=False):
    return struct.pack(">BI", 1 if compressed else 0, len(message)) + message


def id_request(model_id, dof, count, zeros=0):
    """An InverseDynamicsRequest; with zeros > 0, q carries that many zeros instead (a bomb's payload)."""
    q = [0.0] * (zeros if zeros else count * dof)
    return (field_bytes(1, model_id.encode()) + field_varint(2, count) + field_varint(3, dof) +
            packed_doubles(4, q) + packed_doubles(5, [0.0] * (count * dof)) +
            packed_doubles(6, [0.0] * (count * dof)))


def simulate_request(model_id, dof, t_end=90.0, dt_out=0.001, batch=2000):
    return (field_bytes(1, model_id.encode()) + field_varint(2, dof) + packed_doubles(3, [0.1] * dof) +
            packed_doubles(4, [0.0] * dof) + field_double(5, t_end) + field_varint(6, 1) +  # RK4
            field_double(8, dt_out) + field_varint(19, batch))


# ------------------------------------------------------------------------------------------- the connection

class Connection:
    """One HTTP/2 connection, frames written by hand, the server's frames read and tallied."""

    def __init__(self, port, initial_window=65535, host="127.0.0.1", tls=None, source=None):
        self.sock = socket.create_connection((host, port), source_address=(source, 0) if source else None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.scheme = "http"
        if tls:  # (ca, cert, key)
            ctx = ssl.create_default_context(cafile=tls[0])
            ctx.load_cert_chain(tls[1], tls[2])
            ctx.set_alpn_protocols(["h2"])
            self.sock = ctx.wrap_socket(self.sock, server_hostname="localhost")
            self.scheme = "https"
        self.port = port
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 1 << 16
        self.buffer = b""
        self.settings = {}
        self.settings_seen = False
        self.statuses = {}
        self.ended = set()
        self.reset_by_server = {}
        self.goaway = None
        self.sent = 0
        self.window = 65535              # the server's connection-level window for our DATA
        self.stream_windows = {}         # per stream
        self.stream_initial = 65535
        self.closed = False
        self.pending_headers = None      # (stream, block) while CONTINUATION frames arrive
        settings = SettingsFrame(0)
        settings.settings = {SettingsFrame.INITIAL_WINDOW_SIZE: initial_window, SettingsFrame.ENABLE_PUSH: 0}
        self.write(PREFACE + settings.serialize())

    def write(self, data):
        if self.closed:
            return
        try:
            self.sock.sendall(data)
            self.sent += len(data)
        except OSError:  # reset, broken pipe, or the TLS connection's end
            self.closed = True

    def headers(self, stream, path, token=None, extra=(), end_stream=False):
        hdrs = [(":method", "POST"), (":scheme", self.scheme), (":path", path),
                (":authority", "127.0.0.1:%d" % self.port), ("content-type", "application/grpc"),
                ("te", "trailers")]
        if token:
            hdrs.append(("authorization", "Bearer " + token))
        hdrs.extend(extra)
        f = HeadersFrame(stream)
        f.data = self.encoder.encode(hdrs)
        f.flags.add("END_HEADERS")
        if end_stream:
            f.flags.add("END_STREAM")
        self.stream_windows.setdefault(stream, self.stream_initial)
        return f.serialize()

    @staticmethod
    def data(stream, payload, end_stream=False, frame_size=16384):
        out = []
        for i in range(0, max(len(payload), 1), frame_size):
            f = DataFrame(stream)
            f.data = payload[i:i + frame_size]
            if end_stream and i + frame_size >= len(payload):
                f.flags.add("END_STREAM")
            out.append(f.serialize())
        return b"".join(out)

    @staticmethod
    def rst(stream, code=8):
        f = RstStreamFrame(stream)
        f.error_code = code
        return f.serialize()

    def pump(self, timeout=0.0):
        """Reads and handles whatever the server sent within timeout seconds; False once it closed."""
        end = time.monotonic() + timeout
        while not self.closed:
            left = max(0.0, end - time.monotonic())
            buffered = isinstance(self.sock, ssl.SSLSocket) and self.sock.pending() > 0
            ready = buffered or select.select([self.sock], [], [], left)[0]
            if not ready:
                return True
            try:
                chunk = self.sock.recv(1 << 20)
            except (ConnectionResetError, OSError):
                chunk = b""
            if not chunk:
                self.closed = True
                return False
            self.buffer += chunk
            self._frames()
            if time.monotonic() >= end:
                return True
        return False

    def _frames(self):
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                return
            frame, _ = Frame.parse_frame_header(memoryview(self.buffer[:9]))
            frame.parse_body(memoryview(self.buffer[9:9 + length]))
            self.buffer = self.buffer[9 + length:]
            self._handle(frame)

    def _handle(self, f):
        if isinstance(f, SettingsFrame):
            if "ACK" not in f.flags:
                for k, v in f.settings.items():
                    self.settings[SETTING_NAMES.get(k, str(k))] = v
                    if k == SettingsFrame.INITIAL_WINDOW_SIZE:
                        for s in self.stream_windows:
                            self.stream_windows[s] += v - self.stream_initial
                        self.stream_initial = v
                self.settings_seen = True
                ack = SettingsFrame(0)
                ack.flags.add("ACK")
                self.write(ack.serialize())
        elif isinstance(f, PingFrame):
            if "ACK" not in f.flags:
                pong = PingFrame(0)
                pong.opaque_data = f.opaque_data
                pong.flags.add("ACK")
                self.write(pong.serialize())
        elif isinstance(f, WindowUpdateFrame):
            if f.stream_id == 0:
                self.window += f.window_increment
            else:
                self.stream_windows[f.stream_id] = self.stream_windows.get(f.stream_id, self.stream_initial) + \
                    f.window_increment
        elif isinstance(f, (HeadersFrame, ContinuationFrame)):
            block = (self.pending_headers[1] if isinstance(f, ContinuationFrame) else b"") + f.data
            if "END_HEADERS" not in f.flags:
                self.pending_headers = (f.stream_id, block)
                return
            self.pending_headers = None
            for name, value in self.decoder.decode(block):
                if name in (b"grpc-status", "grpc-status"):
                    code = int(value)
                    self.statuses[code] = self.statuses.get(code, 0) + 1
            if "END_STREAM" in f.flags:
                self.ended.add(f.stream_id)
        elif isinstance(f, DataFrame):
            if "END_STREAM" in f.flags:
                self.ended.add(f.stream_id)
        elif isinstance(f, RstStreamFrame):
            self.reset_by_server[f.error_code] = self.reset_by_server.get(f.error_code, 0) + 1
            self.ended.add(f.stream_id)
        elif isinstance(f, GoAwayFrame):
            self.goaway = {"error_code": f.error_code, "last_stream_id": f.last_stream_id,
                           "debug": f.additional_data.decode("latin-1")}

    def send_window(self, stream):
        return min(self.window, self.stream_windows.get(stream, self.stream_initial))

    def send_flow_controlled(self, stream, payload, end_stream, deadline):
        """Sends payload on stream as the server's windows allow; stops when the stream ends or at deadline.
        Returns the bytes sent."""
        sent = 0
        while sent < len(payload) and stream not in self.ended and not self.closed:
            room = self.send_window(stream)
            if room <= 0:
                if time.monotonic() > deadline:
                    break
                self.pump(0.05)
                continue
            piece = payload[sent:sent + min(room, 1 << 20)]
            last = end_stream and sent + len(piece) == len(payload)
            self.write(self.data(stream, piece, last))
            self.window -= len(piece)
            self.stream_windows[stream] = self.stream_windows.get(stream, self.stream_initial) - len(piece)
            sent += len(piece)
            self.pump(0)
        return sent

    def report(self, **more):
        out = {"statuses": {str(k): v for k, v in sorted(self.statuses.items())},
               "reset_by_server": {str(k): v for k, v in sorted(self.reset_by_server.items())},
               "goaway": self.goaway, "bytes_sent": self.sent, "connection_closed": self.closed}
        out.update(more)
        return out


# the command line's TLS material and source address, for open_connection (set by main)
TLS = None
SOURCE = None


def open_connection(port, initial_window=65535):
    c = Connection(port, initial_window, tls=TLS, source=SOURCE)
    deadline = time.monotonic() + 5
    while not c.settings_seen and time.monotonic() < deadline and c.pump(0.05):
        pass
    return c


def wait_ended(c, streams, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not c.closed and not all(s in c.ended for s in streams):
        c.pump(0.05)


# ----------------------------------------------------------------------------------------------- commands

def cmd_settings(a):
    c = open_connection(a.port)
    print(json.dumps({"settings": c.settings}))


def cmd_gzip(a):
    c = open_connection(a.port)
    inflated = id_request("0" * 64, 7, 1, zeros=a.inflated_mb * (1 << 20) // 8)
    bomb = gzip.compress(inflated, 9)
    t0 = time.monotonic()
    streams = []
    for k in range(a.calls):
        s = 1 + 2 * k
        streams.append(s)
        c.write(c.headers(s, "/denoc.v1.Dynamics/InverseDynamics", a.token, [("grpc-encoding", "gzip")]))
        c.send_flow_controlled(s, grpc_frame(bomb, compressed=True), True, time.monotonic() + 10)
    wait_ended(c, streams, 10)
    print(json.dumps(c.report(wire_bytes_per_call=len(bomb), inflated_bytes_per_call=len(inflated),
                              seconds=time.monotonic() - t0)))


def cmd_flagged(a):
    c = open_connection(a.port)
    body = gzip.compress(id_request("0" * 64, 7, 1, zeros=(1 << 20)), 9)
    streams = []
    for k in range(a.calls):
        s = 1 + 2 * k
        streams.append(s)
        c.write(c.headers(s, "/denoc.v1.Dynamics/InverseDynamics", a.token))
        c.send_flow_controlled(s, grpc_frame(body, compressed=True), True, time.monotonic() + 10)
    wait_ended(c, streams, 10)
    print(json.dumps(c.report()))


def cmd_half_sent(a):
    """--calls streams opened at once, each announcing --mb MiB and getting at most half of it, round robin
    as the server's windows allow, for --hold seconds: what the server holds of bodies that never complete."""
    c = open_connection(a.port)
    size = a.mb * (1 << 20)
    header = struct.pack(">BI", 0, size)
    streams = [1 + 2 * k for k in range(a.calls)]
    sent = {s: 0 for s in streams}
    for s in streams:
        c.write(c.headers(s, "/denoc.v1.Dynamics/InverseDynamics", a.token) + c.data(s, header))
    chunk = bytes(1 << 16)
    deadline = time.monotonic() + a.hold
    while time.monotonic() < deadline and not c.closed:
        progressed = False
        for s in streams:
            if s in c.ended or sent[s] >= size // 2:
                continue
            room = min(c.send_window(s), size // 2 - sent[s], len(chunk))
            if room > 0:
                c.write(c.data(s, chunk[:room]))
                c.window -= room
                c.stream_windows[s] -= room
                sent[s] += room
                progressed = True
        c.pump(0 if progressed else 0.05)
    print(json.dumps(c.report(body_bytes_sent=sum(sent.values()), ended=sum(1 for s in streams if s in c.ended))),
          flush=True)


def cmd_unauth(a):
    c = open_connection(a.port)
    # a well-formed frame header announcing the whole message, then as much of it as the server lets in
    size = a.mb * (1 << 20)
    payload = struct.pack(">BI", 0, size) + bytes(size)
    t0 = time.monotonic()
    streams, sent = [], []
    for k in range(a.calls):
        s = 1 + 2 * k
        streams.append(s)
        c.write(c.headers(s, "/denoc.v1.Dynamics/InverseDynamics", a.token))
        sent.append(c.send_flow_controlled(s, payload, True, time.monotonic() + a.seconds_per_call))
    wait_ended(c, streams, 5)
    print(json.dumps(c.report(body_bytes_sent=sent, body_bytes_per_call=len(payload),
                              seconds=time.monotonic() - t0)))


def cmd_header_flood(a):
    c = open_connection(a.port)
    t0 = time.monotonic()
    batch = []
    sent = 0
    for k in range(a.streams):
        batch.append(c.headers(1 + 2 * k, "/denoc.v1.Dynamics/InverseDynamics", a.token))
        if len(batch) == 500:
            c.write(b"".join(batch))
            sent += 0 if c.closed else len(batch)
            batch = []
            if not c.pump(0):
                break
    if batch and not c.closed:
        c.write(b"".join(batch))
        sent += 0 if c.closed else len(batch)
    c.pump(1.0)
    print(json.dumps(c.report(streams_sent=sent, seconds=time.monotonic() - t0)))


def cmd_rapid_reset(a):
    c = open_connection(a.port)
    body = grpc_frame(id_request(a.model or "0" * 64, a.dof, 1))
    t0 = time.monotonic()
    batch = []
    done = 0
    for k in range(a.streams):
        s = 1 + 2 * k
        batch.append(c.headers(s, "/denoc.v1.Dynamics/InverseDynamics", a.token) + c.data(s, body, True) + c.rst(s))
        if len(batch) == 200:
            c.write(b"".join(batch))
            done += 0 if c.closed else len(batch)
            batch = []
            if not c.pump(0):
                break
    if batch and not c.closed:
        c.write(b"".join(batch))
        done += 0 if c.closed else len(batch)
    elapsed = time.monotonic() - t0
    c.pump(0.5)
    print(json.dumps(c.report(streams_sent=done, seconds=elapsed)))


def cmd_stall(a):
    c = open_connection(a.port, initial_window=0)
    streams = []
    req = grpc_frame(simulate_request(a.model, a.dof))
    for k in range(a.calls):
        s = 1 + 2 * k
        streams.append(s)
        c.write(c.headers(s, "/denoc.v1.Dynamics/Simulate", a.token) + c.data(s, req, True))
    c.pump(0.2)
    print("stalled", flush=True)
    wait_ended(c, streams, a.hold)
    ended = sum(1 for s in streams if s in c.ended)
    print(json.dumps(c.report(calls=a.calls, ended=ended)), flush=True)


def cmd_idle(a):
    c = open_connection(a.port)
    streams = []
    for k in range(a.calls):
        s = 1 + 2 * k
        streams.append(s)
        c.write(c.headers(s, a.path, a.token))
    c.pump(0.2)
    print("idle", flush=True)
    wait_ended(c, streams, a.hold)
    ended = sum(1 for s in streams if s in c.ended)
    print(json.dumps(c.report(calls=a.calls, ended=ended)), flush=True)


def cmd_continuation(a):
    c = open_connection(a.port)
    t0 = time.monotonic()
    h = HeadersFrame(1)
    h.data = c.encoder.encode([(":method", "POST"), (":scheme", c.scheme), (":path", "/denoc.v1.Dynamics/GetModel"),
                               (":authority", "127.0.0.1:%d" % a.port), ("content-type", "application/grpc"),
                               ("te", "trailers")])
    c.write(h.serialize())
    sent, k, limit = len(h.data), 0, a.mb << 20
    while sent < limit and not c.closed and not c.goaway:
        f = ContinuationFrame(1)
        f.data = c.encoder.encode([("x-pad-%d" % k, "v" * 16000)], huffman=False)
        c.write(f.serialize())
        sent += len(f.data)
        k += 1
        if k % 16 == 0 and not c.pump(0):
            break
    seconds = time.monotonic() - t0
    c.pump(1.0)
    print(json.dumps(c.report(header_bytes_sent=sent, seconds=round(seconds, 3))), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["settings", "gzip", "flagged", "unauth", "header-flood", "rapid-reset",
                                       "stall", "idle", "half-sent", "continuation"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--token", default=None)
    p.add_argument("--calls", type=int, default=16)
    p.add_argument("--inflated-mb", type=int, default=60)
    p.add_argument("--mb", type=int, default=60)
    p.add_argument("--seconds-per-call", type=float, default=2.0)
    p.add_argument("--streams", type=int, default=100000)
    p.add_argument("--model", default=None)
    p.add_argument("--dof", type=int, default=7)
    p.add_argument("--hold", type=float, default=30.0)
    p.add_argument("--path", default="/denoc.v1.Dynamics/Stream")
    p.add_argument("--tls-ca")
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--source", default=None)
    a = p.parse_args()
    global TLS, SOURCE
    TLS = (a.tls_ca, a.tls_cert, a.tls_key) if a.tls_ca else None
    SOURCE = a.source
    {"settings": cmd_settings, "gzip": cmd_gzip, "flagged": cmd_flagged, "unauth": cmd_unauth,
     "header-flood": cmd_header_flood, "rapid-reset": cmd_rapid_reset, "stall": cmd_stall,
     "idle": cmd_idle, "half-sent": cmd_half_sent, "continuation": cmd_continuation}[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
