"""protowire: the protocol-buffers wire format written by hand, for the tools that build raw requests
without generated code (h2_probe.py, slow_registrations.py)."""
import struct


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_varint(number, v):
    return varint(number << 3) + varint(v)


def field_double(number, v):
    return varint(number << 3 | 1) + struct.pack("<d", v)


def packed_doubles(number, values):
    return field_bytes(number, struct.pack("<%dd" % len(values), *values))
