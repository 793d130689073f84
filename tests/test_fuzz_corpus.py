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


class _Input:
    """The fuzz input reader of fuzz/common.h: bytes past the end read as 0."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def u8(self):
        b = self.data[self.pos] if self.pos < len(self.data) else 0
        self.pos += 1
        return b

    def u16(self):
        return self.u8() | (self.u8() << 8)

    def take(self, n):
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s

    def left(self):
        return self.pos < len(self.data)


def test_columnar_corpus():
    """fuzz/corpus/fuzz_columnar framed as fuzz/fuzz_columnar.c does, read with
    fetch_arrow() in the input's batch size and decimal option."""
    pa = pytest.importorskip("pyarrow")
    files = _inputs("fuzz_columnar")
    assert len(files) >= 10
    sizes = [1, 2, 3, 7, 64, 1000, -1, 1, 5, 8, 9, 100, -1, 2, 1, 3]
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        if len(data) < 10:
            continue
        inp = _Input(data)
        mode = inp.u8()
        deprecate_eof, binary = mode & 1, (mode >> 1) & 1
        decimal = ("decimal", "float", "str", "decimal")[(mode >> 2) & 3]
        ncols = 1 + inp.u8() % 8
        seq = 1
        wire = _pkt(seq, bytes([ncols]))
        for i in range(ncols):
            type_, flags, charset, length, decimals = (inp.u8(), inp.u16(), inp.u16(),
                                                      inp.u16(), inp.u8())
            name = b"c%d" % i
            col = (b"\x03def\x02db\x01t\x01t" + bytes([len(name)]) + name + bytes([len(name)])
                   + name + b"\x0c" + struct.pack("<HIBHB", charset, length, type_, flags,
                                                 decimals) + b"\x00\x00")
            seq += 1
            wire += _pkt(seq, col)
        if not deprecate_eof:
            seq += 1
            wire += _pkt(seq, b"\xfe\x00\x00\x02\x00")
        for _row in range(64):
            if not inp.left():
                break
            if binary:
                nb = (ncols + 9) // 8
                bitmap = inp.take(nb)
                row = b"\x00" + bitmap + b"\x00" * (nb - len(bitmap))
                row += inp.take(inp.u8())
            else:
                row = b""
                for _c in range(ncols):   # as mcf_text_row in fuzz/common.h
                    ctl = inp.u8()
                    if ctl == 0xFB:
                        row += b"\xfb"
                    elif ctl == 0xFC:
                        row += _lenenc_str(bytes([inp.u8()]) * 300)
                    else:
                        row += _lenenc_str(inp.take(ctl % 64))
            seq += 1
            wire += _pkt(seq & 0xFF, row)
        seq += 1
        wire += _pkt(seq & 0xFF, b"\xfe\x00\x00\x02\x00\x00\x00" if deprecate_eof
                     else b"\xfe\x00\x00\x02\x00")
        c = _core.Connection()
        c._replay(wire, 0x200 | (0x01000000 if deprecate_eof else 0), bool(binary))
        batch = sizes[mode >> 4]
        try:
            for _ in range(200):
                if not c.rows_pending:
                    break
                schema, array, rows = c.fetch_arrow(batch, decimal=decimal)
                assert batch < 0 or rows <= batch
                pa.RecordBatch._import_from_c_capsule(schema, array).validate(full=True)
        except (mysqlc.Error, ValueError):
            pass
        c.close()
