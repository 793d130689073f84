"""Smoke test of benchmarks/bench_small.py (issue 22's small-statement benchmark): a run
with tiny sizes for mysqlc and mysqlc.aio against the suite's server, so that the script
(its workers, checks, report, JSON, targets and chart) cannot rot unnoticed.  The
figures themselves are not judged here."""

import copy
import importlib.util
import json
import os
import subprocess
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "benchmarks")
sys.path.insert(0, BENCH)
import bench_small  # noqa: E402

STATEMENTS = ("select1", "point", "insert", "update")


def _dsn(server):
    dsn = server.dsn()
    if server.unix_socket:
        dsn += "?unix_socket=" + server.unix_socket
    return dsn


@pytest.fixture(scope="module")
def run(server, tmp_path_factory):
    """One tiny run: (completed process, the JSON document it wrote)."""
    out = tmp_path_factory.mktemp("bench_small") / "small.json"
    cmd = [sys.executable, os.path.join(BENCH, "bench_small.py"), "--dsn", _dsn(server),
           "--drivers", "mysqlc,mysqlc-aio", "--modes", "seq,pool10", "--loops", "asyncio",
           "--n", "200", "--pool-n", "200", "--warmup", "20", "--pings", "100",
           "--blocks", "2", "--repeat", "2", "--ceiling-n", "300", "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(out) as f:
        return proc, json.load(f)


def test_every_cell_ran_and_checked(run):
    proc, doc = run
    keys = {"mysqlc|seq|-", "mysqlc-aio|seq|asyncio", "mysqlc-aio|pool10|asyncio"}
    assert set(doc["runs"]) == keys
    for key in keys:
        assert len(doc["runs"][key]) == 2, doc["runs"][key]   # --repeat 2
        assert doc["checks"][key] == {s: "ok" for s in STATEMENTS}, doc["checks"][key]
        for stmt in STATEMENTS:
            s = doc["summary"][key][stmt]
            assert s["cpu_us"]["median"] > 0 and s["ping_us"]["median"] > 0
            assert s["sps"]["best"] >= s["sps"]["median"] > 0
            assert s["cpu_us"]["best"] <= s["cpu_us"]["median"]
            assert abs(s["above_us"]["median"] - statistics_median(
                [c - p for c, p in zip(s["cpu_us"]["values"], s["ping_us"]["values"])])) < 1e-9
            if "pool" in key:
                assert s["p99_ms"]["median"] >= s["p50_ms"]["median"] > 0
    for r in doc["runs"]["mysqlc|seq|-"]:
        assert r["statements"]["select1"]["n"] == 200
        assert r["statements"]["select1"]["pings"] == 100
    # the table names every cell and statement
    for label in ("mysqlc ", "mysqlc-aio@asyncio"):
        assert label in proc.stdout
    assert "== seq:" in proc.stdout and "== pool10:" in proc.stdout


def test_ceiling(run):
    """The pooled modes' ceiling: the same statements from mariadb-slap, counted by the
    server and checked as the drivers' are, or a header line saying why it is not
    measured (no slap binary on this machine)."""
    proc, doc = run
    if bench_small.slap_binary() is None:
        assert "ceiling : not measured (no mariadb-slap or mysqlslap on PATH)" in proc.stdout
        assert doc["ceiling"] == {}
        return
    assert "== ceiling: " in proc.stdout
    assert set(doc["ceiling"]) == set(STATEMENTS)
    for stmt in STATEMENTS:
        assert doc["ceiling"][stmt]["check"] == "ok", doc["ceiling"][stmt]
        runs = [r["statements"][stmt] for r in doc["ceiling_runs"][stmt]]
        assert len(runs) == 2                          # --repeat 2
        for r in runs:   # "not exact" in slap's words: the server's count is used
            assert 250 <= r["n"] <= 300 and r["wall_s"] > 0 and r["conns"] == 10, r
            assert r["server_cpu_s"] is not None
        s = doc["ceiling"][stmt]["summary"]
        assert s["sps"]["median"] > 0 and s["cpu_us"]["median"] > 0
        assert "ping_us" not in s
    # beside the pooled target, as its ratio to the peer's statements/s
    measured = bench_small.evaluate_targets(_with_peers(doc, (15.0, 10.0, 25.0),
                                                        (30.0, 10.0, 50.0)))
    pooled = [t["measured"] for t in measured if t["target"].startswith("pooled")]
    assert len(pooled) == len(STATEMENTS) and all("; ceiling " in m for m in pooled)


def statistics_median(xs):
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def _with_peers(doc, mine, peers):
    """A copy of `doc` whose every run has the figures `mine` (mysqlc, mysqlc-aio) or
    `peers` (mysqlclient, asyncmy: copies of mysqlc's cells): (CPU µs per statement,
    ping CPU µs, wall µs per statement)."""
    doc = copy.deepcopy(doc)
    for me, peer in (("mysqlc|seq|-", "mysqlclient|seq|-"),
                     ("mysqlc-aio|seq|asyncio", "asyncmy|seq|asyncio"),
                     ("mysqlc-aio|pool10|asyncio", "asyncmy|pool10|asyncio")):
        doc["runs"][peer] = copy.deepcopy(doc["runs"][me])
        doc["cells"].append(peer.split("|"))
        for key, (cpu, ping, wall) in ((me, mine), (peer, peers)):
            for r in doc["runs"][key]:
                for st in r["statements"].values():
                    st.update(cpu_s=cpu * 1e-6 * st["n"], ping_cpu_s=ping * 1e-6 * st["pings"],
                              wall_s=wall * 1e-6 * st["n"])
    bench_small.build_summaries(doc)
    doc["targets"] = bench_small.evaluate_targets(doc)
    return doc


def test_targets_are_computed_not_assumed(run):
    """The targets come from the figures: equal figures give ratios of exactly 1.00 and
    miss all three targets (sync <= 0.5, asyncio CPU <= 0.7, pooled >= 1.3); half the
    CPU and wall time (and the same ping) meet them all."""
    _, doc = run
    same = _with_peers(doc, (30.0, 10.0, 50.0), (30.0, 10.0, 50.0))
    assert len(same["targets"]) == 3 * len(STATEMENTS)
    assert all(t["met"] is False and "= 1.00x" in t["measured"] for t in same["targets"])
    text = "\n".join(bench_small.target_lines(same))
    assert text.count("MISSED") == 3 * len(STATEMENTS)
    better = _with_peers(doc, (15.0, 10.0, 25.0), (30.0, 10.0, 50.0))
    measured = {t["target"].split()[0]: t["measured"] for t in better["targets"]}
    assert all(t["met"] is True for t in better["targets"]), better["targets"]
    assert "= 0.25x" in measured["sync"]      # (15 - 10) / (30 - 10)
    assert "= 0.50x" in measured["async"]     # 15 / 30
    assert "= 2.00x" in measured["pooled"]    # statements/s: 1 / 25 µs over 1 / 50 µs
    assert "\n".join(bench_small.target_lines(better)).count(" MET") == 3 * len(STATEMENTS)


def test_chart(run, tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        # the benchmark peers' extra (tools/bootstrap.sh --bench); the rest is tested
        return
    _, doc = run
    path = tmp_path / "small.png"
    bench_small.chart(doc, str(path))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
