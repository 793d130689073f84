"""The fuzz seed corpora (fuzz/corpus/) replayed through the normal build, no clang needed.

Every input of fuzz/corpus/fuzz_query_response (real server captures and the inputs of
crashes found by fuzzing) is parsed with Connection._replay() and fetched to the end;
every fuzz_text_value input is decoded through a replayed one-column result.  Any error
must be a mysqlc.Error (or ValueError/ArithmeticError from a bad value).  Under
tools/sanitize-test.sh this runs with ASan+UBSan too.
"""

import os
import struct

import pytest

import mysqlc
from mysqlc import _core

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz", "corpus")


def _inputs(harness):
    d = os.path.join(CORPUS, harness)
    return sorted(os.path.join(d, f) for f in os.listdir(d)) if os.path.isdir(d) else []


def _replay_all(data, flags):
    c = _core.Connection()
    try:
        c._replay(data, flags)
        for _ in range(64):
            c.fetch()
            if c.next_result() < 0:
                break
    except (mysqlc.Error, ValueError, ArithmeticError):
        pass
    c.close()


def test_query_response_corpus():
    files = _inputs("fuzz_query_response")
    assert len(files) >= 10
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        if not data:
            continue
        flags = 0x200 | (0x01000000 if data[0] & 1 else 0) | (0x00800000 if data[0] & 2 else 0)
        _replay_all(data[1:], flags)


def _lenenc_str(b):
    n = len(b)
    if n < 251:
        return bytes([n]) + b
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n) + b
    return b"\xfd" + struct.pack("<I", n)[:3] + b


def _pkt(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def test_text_value_corpus():
    files = _inputs("fuzz_text_value")
    assert len(files) >= 10
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < 5:
            continue
        type_, flags, charset = struct.unpack_from("<BHH", data)
        col = (b"\x03def\x00\x00\x00\x01v\x00\x0c" + struct.pack("<HIBHB", charset, 255, type_, flags, 0)
               + b"\x00\x00")
        wire = (_pkt(1, b"\x01") + _pkt(2, col) + _pkt(3, _lenenc_str(data[5:]))
                + _pkt(4, b"\xfe\x00\x00\x02\x00\x00\x00"))
        _replay_all(wire, 0x200 | 0x01000000)
