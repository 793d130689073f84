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


# ------------------------------------------------------------------ fuzz_engine_chunks
# fuzz/fuzz_engine_chunks.c re-expressed: the same input format (see its header comment),
# the same flows, traces and comparison.

_STATE = ("server_status", "affected_rows", "insert_id", "warning_count", "info",
          "description", "field_count", "more_results", "rows_pending", "thread_id",
          "server_version", "auth_plugin_name", "client_flag", "last_errno", "last_error",
          "last_sqlstate")
_EXPECTED = (mysqlc.Error, ValueError, ArithmeticError)


class _Plan:
    def __init__(self, whole=False, prng=None, shift=0, sizes=()):
        self.whole, self.rng, self.shift, self.sizes = whole, prng, shift, list(sizes)
        self.idx, self.cycled = 0, False

    def next(self, left):
        if self.whole:
            return left
        if self.rng is not None:
            x = self.rng
            x ^= (x << 13) & 0xFFFFFFFF
            x ^= x >> 17
            x ^= (x << 5) & 0xFFFFFFFF
            self.rng = x
            n = 1 + x % (1 << self.shift)
        elif not self.sizes:
            n = left
        else:
            n = self.sizes[self.idx]
            if n == 0 and self.cycled:
                n = 1
            self.idx += 1
            if self.idx == len(self.sizes):
                self.idx, self.cycled = 0, True
        return min(n, left)


class _Stop(Exception):
    pass


class _Engine:
    def __init__(self, plan, total):
        self.c = _core.Connection()
        self.plan, self.trace, self.calls = plan, [], None
        # every byte may take a feed and a step; an empty feed of the plan's first pass too
        self.steps = 0
        self.max_steps = 64 + 16 * total + 4 * len(getattr(plan, "sizes", None) or ())
        self.set_stream(b"")

    def set_stream(self, s):
        self.s, self.pos, self.fed = s, 0, False

    def count(self):
        self.steps += 1
        assert self.steps <= self.max_steps, "step bound exceeded"

    def error(self, kind, where, exc):
        self.trace.append((kind, where, type(exc), exc.args))

    def feed(self):
        """1 fed, 0 exhausted, -1 the feed raised (recorded)."""
        if self.pos == len(self.s) and self.fed:
            return 0
        k = self.plan.next(len(self.s) - self.pos)
        self.fed = True
        chunk = self.s[self.pos:self.pos + k]
        self.pos += k
        self.count()
        try:
            self.c._engine_feed(chunk)
        except _EXPECTED as exc:
            self.error("feed-error", "_engine_feed", exc)
            return -1
        return 1

    def feed_rest(self):
        while self.pos < len(self.s):
            if self.feed() < 0:
                break

    def wait_step(self, name):
        m = getattr(self.c, name)
        while True:
            self.count()
            try:
                r = m()
            except _EXPECTED as exc:
                self.error("error", name, exc)
                raise _Stop
            if r is not None:
                return r
            f = self.feed()
            if f == 0:
                self.trace.append(("incomplete", name))
            if f <= 0:
                raise _Stop

    def response_flow(self, by_row):
        limit = 1 if by_row else -1
        while True:
            nc = self.wait_step("_engine_response")
            rows = []
            keys = self.c.column_names if by_row else None
            ok = True
            while ok and self.c.rows_pending:
                self.count()
                try:
                    got = self.c._engine_fetch(limit, keys)
                except _EXPECTED as exc:
                    self.error("error", "_engine_fetch", exc)
                    ok = False
                    break
                rows += got
                if (limit < 0 or len(got) < limit) and self.c.rows_pending:
                    f = self.feed()
                    if f == 0:
                        self.trace.append(("incomplete", "_engine_fetch"))
                    if f <= 0:
                        ok = False
            res = ("result", nc, self.c.description, rows if ok or by_row else None)
            if ok:
                self.trace.append(res)
            else:
                self.trace.insert(len(self.trace) - 1, res)
                raise _Stop
            if not self.c.more_results:
                return

    def output(self, length_only=False):
        out = self.c._engine_output()
        self.trace.append(("output-length", len(out)) if length_only else ("output", out))

    def state(self):
        st = []
        for name in _STATE:
            try:
                st.append(getattr(self.c, name))
            except _EXPECTED as exc:
                st.append(("attr-error", name, type(exc), exc.args))
        self.trace.append(("state", st))


def _engine_input(data):
    inp = _Input(data)
    mode = inp.u8()
    flow = mode & 3
    flags = 0x200
    if mode & 4:
        flags |= 1 << 24
    if mode & 8:
        flags |= 1 << 23
    if mode & 0x80:
        flags |= 0x80
    p = inp.u8()
    if p & 0x80:
        seed = inp.u16() | (inp.u16() << 16)
        plan = dict(prng=seed or 1, shift=p & 15)
    else:
        raw = inp.take(2 * (p & 0x7F))
        raw = raw[:len(raw) & ~1]
        plan = dict(sizes=[raw[i] | (raw[i + 1] << 8) for i in range(0, len(raw), 2)])
    split = inp.u16() if flow in (1, 3) else 0
    creds = None
    if flow == 3:
        user = inp.take(inp.u8())
        pw = inp.take(inp.u8())
        db = inp.take(inp.u8()) or None
        creds = (user, pw, db)
    rest = data[inp.pos:] if inp.pos < len(data) else b""
    if flow in (0, 2):
        split = len(rest)
    split = min(split, len(rest))
    return mode, flags, plan, creds, rest[:split], rest[split:], len(rest)


def _engine_run(mode, flags, plan, creds, s1, s2, total):
    e = _Engine(plan, total)
    flow, by_row = mode & 3, bool(mode & 0x10)
    if mode & 0x20:
        calls = []

        def handler(name):
            calls.append(name)
            return [b"1\tone\n2\ttwo\n3\tthree\n"]
        e.c.infile_handler = handler
        e.calls = calls
    ext = 16 if mode & 0x40 else 0
    try:
        if flow in (0, 2):
            e.c._engine_start(client_flag=flags, compress=flow == 2, ext_caps=ext)
            e.set_stream(s1)
            try:
                e.response_flow(by_row)
            except _Stop:
                pass
            e.feed_rest()
            e.output()
        elif flow == 1:
            e.c._engine_start(client_flag=flags, ext_caps=ext)
            e.set_stream(s1)
            try:
                prep = e.wait_step("_engine_prepare_response")
                e.trace.append(("prepare", prep))
            except _Stop:
                prep = None
            e.feed_rest()
            e.output()
            if prep is not None:
                e.c._engine_start(client_flag=flags, binary=True, ext_caps=ext, stmt=prep[0])
                e.set_stream(s2)
                try:
                    e.response_flow(by_row)
                except _Stop:
                    pass
                e.feed_rest()
                e.output()
        else:
            e.c._engine_handshake(*creds, compress=bool(mode & 4))
            e.set_stream(s1)
            try:
                done = e.wait_step("_engine_handshake_step")
                e.trace.append(("handshake", done))
            except _Stop:
                done = None
            e.feed_rest()
            e.output(b"-----BEGIN" in s1)
            if done is not None and s2:
                try:
                    e.c._engine_command(3, b"SELECT 1")
                except _EXPECTED as exc:
                    e.error("error", "_engine_command", exc)
                else:
                    e.set_stream(s2)
                    try:
                        e.response_flow(by_row)
                    except _Stop:
                        pass
                    e.feed_rest()
                e.output()
    finally:
        e.state()
        if e.calls is not None:
            e.trace.append(("infile-calls", e.calls))
        try:
            e.c.close()
        except _EXPECTED as exc:
            e.error("error", "close", exc)
    return e.trace


def _same(a, b):
    try:
        if a == b:
            return True
    except ArithmeticError:   # a signalling Decimal NaN
        pass
    return repr(a) == repr(b)


def _first(trace, kind):
    return next((it for it in trace if it[0] == kind), None)


def engine_chunks_check(data):
    """The differential check of fuzz/fuzz_engine_chunks.c on one input; returns the
    whole-fed engine's trace."""
    if len(data) < 2:
        return None
    mode, flags, plan, creds, s1, s2, total = _engine_input(data)
    ref = _engine_run(mode, flags, _Plan(whole=True), creds, s1, s2, total)
    got = _engine_run(mode, flags, _Plan(**plan), creds, s1, s2, total)
    ferr = _first(ref, "feed-error")
    if ferr is not None:
        assert _first(got, "error") or _first(got, "feed-error"), (ref, got)
        g = _first(got, "feed-error")
        assert g is None or _same(ferr[2:], g[2:]), (ref, got)
    elif (mode & 3) == 3 and mode & 4 and any(
            it[0] == "error" and "unexpected bytes after authentication" in repr(it[3]) for it in ref):
        pass
    else:
        assert _same(ref, got), "outcomes differ:\n  whole:   %r\n  chunked: %r" % (ref, got)
    return ref


def test_engine_chunks_corpus():
    """fuzz/corpus/fuzz_engine_chunks (real captures of every engine flow, each with a few
    chunk plans): the chunked engine ends exactly as the whole-fed one."""
    files = _inputs("fuzz_engine_chunks")
    assert len(files) >= 40
    flows = set()
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        ref = engine_chunks_check(data)
        if ref is not None and not any(it[0] == "incomplete" for it in ref):
            flows.add(data[0] & 3)
    assert flows == {0, 1, 2, 3}    # every flow has a seed that runs to its end
