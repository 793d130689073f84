"""Wire replay and floor for benchmarks/bench.py --replay.

Capture: one mysqlc connection sends each scan's query once as COM_QUERY (text rows) and
once through COM_STMT_PREPARE + COM_STMT_EXECUTE (binary rows), recording the bytes the
server sent with ``Connection._start_capture()`` / ``_stop_capture()``.

Replay: ``mysqlc._core.Connection()._replay(data, client_flag, binary)`` parses the
captured response with no socket, and ``fetch(-1)`` decodes every row into Python objects:
the C decoder's cost alone, with no server and no network, stable from run to run.

Floor: benchmarks/_floor.c, compiled here at run time (sysconfig's compiler and flags, -O2
as mysqlc's setup.py) into benchmarks/out/build/, creates the same Python objects -- one
tuple per row, values taken from a sample of the decoded rows -- in a C loop without
reading any wire bytes: the cost no decoder can go under.

MariaDB's metadata cache (MARIADB_CLIENT_CACHE_METADATA) means COM_STMT_EXECUTE's
response carries no column definitions (the client has them from the prepare); the
captured binary response is spliced with the prepare response's column definitions into
the complete response a client without the cache would get, which ``_replay`` expects.

Also usable on its own for profiling:

    python benchmarks/bench.py --replay --save-wire DIR --drivers mysqlc --scenarios select1
    python benchmarks/_replay.py loop DIR/int10_200k.text.wire 50   # replay 50 times
    python benchmarks/_replay.py floor DIR/int10_200k.text.wire 50  # the floor, 50 times
"""

import gc
import os
import shlex
import statistics
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(HERE, "out", "build")
CLIENT_DEPRECATE_EOF = 1 << 24
SAMPLE_ROWS = 4096


def build_floor():
    """Compile benchmarks/_floor.c (when the source is newer) and import it."""
    src = os.path.join(HERE, "_floor.c")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    out = os.path.join(BUILD_DIR, "_floor" + suffix)
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        os.makedirs(BUILD_DIR, exist_ok=True)
        cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
        cflags = shlex.split(sysconfig.get_config_var("CFLAGS") or "")
        cmd = (cc + cflags + ["-O2", "-fPIC", "-shared",
                              "-I" + sysconfig.get_paths()["include"], src, "-o", out + ".tmp"])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError("cannot compile %s: %s\n%s" % (src, " ".join(cmd), proc.stderr))
        os.replace(out + ".tmp", out)
    if BUILD_DIR not in sys.path:
        sys.path.insert(0, BUILD_DIR)
    import _floor
    return _floor


# ---------------------------------------------------------------------------- wire bytes

def frames(data):
    """The wire packets of ``data`` as payloads (a 16 MiB packet split stays split)."""
    out, i = [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 3], "little")
        out.append(data[i + 4:i + 4 + n])
        i += 4 + n
    if i != len(data):
        raise ValueError("captured bytes end inside a packet")
    return out


def join_frames(payloads):
    """Frame ``payloads`` again with sequence ids from 1 (a response's first id)."""
    return b"".join(len(p).to_bytes(3, "little") + bytes([(k + 1) & 0xFF]) + p
                    for k, p in enumerate(payloads))


def splice_execute(prepare_bytes, execute_bytes, client_flag):
    """The complete COM_STMT_EXECUTE response: column definitions from the prepare
    response put back where MariaDB's metadata cache left them out."""
    prep, exe = frames(prepare_bytes), frames(execute_bytes)
    eof = 0 if client_flag & CLIENT_DEPRECATE_EOF else 1
    ncols = int.from_bytes(prep[0][5:7], "little")
    nparams = int.from_bytes(prep[0][7:9], "little")
    first = 1 + (nparams + eof if nparams else 0)
    coldefs = prep[first:first + ncols + eof]
    count = exe[0]
    if count[0] >= 0xFB:
        raise ValueError("column count %r is not a one-byte length" % count[:3])
    meta_follows = len(count) < 2 or count[1] != 0
    body = exe[1:] if meta_follows else coldefs + exe[1:]
    return join_frames([count[:1]] + body)


def capture(core, sql):
    """(text response, binary response, rows, binary rows) of ``sql`` on mysqlc's core."""
    core._start_capture()
    core.query(sql.encode())
    rows = core.fetch(-1)
    text = core._stop_capture()
    core._start_capture()
    stmt_id = core.stmt_prepare(sql.encode())[0]
    prep = core._stop_capture()
    core._start_capture()
    core.stmt_execute(stmt_id, ())
    brows = core.fetch(-1)
    exe = core._stop_capture()
    core.stmt_close(stmt_id)
    return text, splice_execute(prep, exe, core.client_flag), rows, brows


# ---------------------------------------------------------------------------- timing

def replay_once(data, client_flag, binary):
    from mysqlc import _core
    c = _core.Connection()
    c._replay(data, client_flag, binary)
    return c.fetch(-1)


def time_runs(fns, repeat):
    """{name: [{cpu_s, wall_s}]}: ``repeat`` rounds after one untimed warm-up round, each
    round calling every fn in ``fns`` ({name: fn}) once in turn, so that all of them meet
    the same heap (a result's objects are freed after the clock stops)."""
    runs = {name: [] for name in fns}
    for k in range(repeat + 1):
        for name, fn in fns.items():
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            out = fn()
            c1, t1 = time.process_time(), time.perf_counter()
            del out
            if k:
                runs[name].append({"cpu_s": c1 - c0, "wall_s": t1 - t0})
    return runs


def summary(runs, nrows):
    cpus = [r["cpu_s"] for r in runs]
    med = statistics.median(cpus)
    return {"runs": runs, "cpu_median_s": med, "cpu_best_s": min(cpus),
            "wall_median_s": statistics.median(r["wall_s"] for r in runs),
            "cpu_us_per_row": med / nrows * 1e6}


def measure(name, sql, core, floor, decimal_type, repeat, save_dir=None):
    """Capture ``sql`` once, then time the text and binary replays and the floor, in turn."""
    text, binary, rows, brows = capture(core, sql)
    flag = core.client_flag
    if save_dir:
        for kind, data in (("text", text), ("binary", binary)):
            with open(os.path.join(save_dir, "%s.%s.wire" % (name, kind)), "wb") as f:
                f.write(flag.to_bytes(8, "little") + data)
    n = len(rows)
    plan = floor.plan(rows[::max(1, n // SAMPLE_ROWS)], decimal_type)
    built = floor.build(plan, 1)
    out = {"rows": n, "columns": len(rows[0]) if rows else 0,
           "bytes": {"text": len(text), "binary": len(binary)},
           "same_rows": {"text": replay_once(text, flag, False) == rows,
                         "binary": replay_once(binary, flag, True) == rows,
                         "live_binary": brows == rows},
           "floor_same_types": not n or [type(v) for v in built[0]] == [type(v) for v in rows[0]]}
    del rows, brows, built  # time on a heap without them
    runs = time_runs({"text": lambda: replay_once(text, flag, False),
                      "binary": lambda: replay_once(binary, flag, True),
                      "floor": lambda: floor.build(plan, n)}, repeat)
    for kind in runs:
        out[kind] = summary(runs[kind], n)
    for kind in ("text", "binary"):
        out[kind]["over_floor"] = out[kind]["cpu_median_s"] / out["floor"]["cpu_median_s"]
    return out


def replay_main(spec, connect):
    """Worker entry (bench.py --replay-worker): {scenario: measurements}."""
    import decimal
    floor = build_floor()
    conn = connect()
    core = conn._conn
    res = {"client_flag": core.client_flag, "scenarios": {}}
    for name, sql in spec["queries"]:
        res["scenarios"][name] = measure(name, sql, core, floor, decimal.Decimal,
                                         spec["repeat"], spec.get("save_dir"))
    conn.close()
    return res


# ---------------------------------------------------------------------------- CLI

def _load_wire(path):
    with open(path, "rb") as f:
        data = f.read()
    return int.from_bytes(data[:8], "little"), data[8:], ".binary." in os.path.basename(path)


def main(argv):
    if len(argv) == 3 and argv[0] in ("loop", "floor"):
        flag, data, binary = _load_wire(argv[1])
        n = int(argv[2])
        rows = replay_once(data, flag, binary)
        nrows = len(rows)
        if argv[0] == "floor":
            import decimal
            floor = build_floor()
            plan = floor.plan(rows[::max(1, nrows // SAMPLE_ROWS)], decimal.Decimal)
            fn = lambda: floor.build(plan, nrows)  # noqa: E731
        else:
            fn = lambda: replay_once(data, flag, binary)  # noqa: E731
        del rows
        s = summary(time_runs({argv[0]: fn}, n)[argv[0]], nrows)
        print("%s %s: %d rows, median %.1f ms, best %.1f ms, %.3f µs/row" % (
            argv[0], argv[1], nrows, s["cpu_median_s"] * 1e3, s["cpu_best_s"] * 1e3,
            s["cpu_us_per_row"]))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
