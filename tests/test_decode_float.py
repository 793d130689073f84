"""Text DOUBLE/FLOAT values decode to exactly float(text), whatever the digits, through
the row decoder (strtod_l fast path, float() fallback) and the columnar builder."""

import math
import random
import struct

import pytest

import mysqlc
from mysqlc import _core

from test_fuzz_corpus import _lenenc_str, _pkt


def _result(texts, type_=5):
    col = (b"\x03def\x00\x00\x00\x01v\x00\x0c" + struct.pack("<HIBHB", 63, 22, type_, 0, 31)
           + b"\x00\x00")
    wire = _pkt(1, b"\x01") + _pkt(2, col)
    seq = 3
    for t in texts:
        wire += _pkt(seq & 0xFF, _lenenc_str(t))
        seq += 1
    return wire + _pkt(seq & 0xFF, b"\xfe\x00\x00\x02\x00\x00\x00")


def _texts():
    rnd = random.Random(1234)
    out = [b"0", b"-0", b"1", b"-1.5", b"1e308", b"1.7976931348623157e308", b"5e-324",
           b"2.2250738585072014e-308", b"0.1", b"1e-7", b"123456789012345678901234567890",
           b"9007199254740993", b"1.00000000000000011102230246251565404236316680908203125",
           b"1e+20", b"1E5", b"+3"]
    for _ in range(3000):
        x = struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0]
        if math.isfinite(x):
            out.append(repr(x).encode())
            out.append(("%.17g" % x).encode())
            out.append(("%.*f" % (rnd.randint(0, 6), x)).encode() if abs(x) < 1e30 else b"7")
    return out


def test_text_doubles_equal_float_of_the_text():
    texts = _texts()
    c = _core.Connection()
    c._replay(_result(texts), 0x200 | 0x01000000)
    got = [r[0] for r in c.fetch()]
    want = [float(t) for t in texts]
    assert [struct.pack("<d", g) for g in got] == [struct.pack("<d", w) for w in want]


def test_text_doubles_columnar_equal_float_of_the_text():
    pa = pytest.importorskip("pyarrow")
    texts = _texts()
    c = _core.Connection()
    c._replay(_result(texts), 0x200 | 0x01000000)
    schema, array, rows = c.fetch_arrow(-1)
    got = pa.RecordBatch._import_from_c_capsule(schema, array).column(0).to_pylist()
    assert [struct.pack("<d", g) for g in got] == [struct.pack("<d", float(t)) for t in texts]


@pytest.mark.parametrize("text", [b"inf", b"-inf", b"nan", b" 1", b"0x10", b"1_0", b"", b"1e"])
def test_odd_double_texts_behave_as_float(text):
    c = _core.Connection()
    c._replay(_result([text]), 0x200 | 0x01000000)
    try:
        want = float(text)
    except ValueError:
        with pytest.raises(mysqlc.OperationalError, match="Malformed value"):
            c.fetch()
        return
    got = c.fetch()[0][0]
    assert got == want or (math.isnan(got) and math.isnan(want))
