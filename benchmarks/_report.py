"""Targets, chart and RESULTS.md for benchmarks/bench.py.

Everything here works from the JSON document bench.py writes (``--json``), so a recorded
run can be turned into a chart and the generated part of RESULTS.md again later:

    python benchmarks/_report.py benchmarks/out/full.json --chart benchmarks/results.png \
        --results benchmarks/RESULTS.md

The targets are those of issue 3 (medians, same run, same server); ``evaluate_targets``
says for each what was measured and whether it is met, never rounding a miss into a hit.
"""

import json
import os
import sys

SCANS = ("int10_200k", "mixed_200k", "datetime_200k", "wide100_200k")
BUFFERED = SCANS + ("text_200k", "blob_1m", "int10_1m")
LOOPS = ("select1", "point", "point_prepared")
EXECUTEMANY = ("executemany_20k", "executemany_20k_prepared")
UNBUFFERED_MAX_GROWTH_MB = 5.0
BEGIN = "<!-- bench.py --results: generated from here -->"
END = "<!-- bench.py --results: generated up to here -->"


def summ(doc, key, driver):
    """A driver's summary in scenario ``key`` when its check is ok, else None."""
    e = doc["results"].get(key, {}).get(driver, {})
    return e.get("summary") if e.get("check") == "ok" else None


def peers(doc, key):
    """{driver: summary} of every peer (not mysqlc) with a good result in ``key``."""
    out = {}
    for d in doc["results"].get(key, {}):
        s = summ(doc, key, d)
        if d != "mysqlc" and s:
            out[d] = s
    return out


def _row(target, scenario, measured, met):
    return {"target": target, "scenario": scenario, "measured": measured, "met": met}


def evaluate_targets(doc):
    """[{target, scenario, measured, met}] for the targets whose scenarios ran."""
    rows = []
    for key in SCANS:
        me, ps = summ(doc, key, "mysqlc"), peers(doc, key)
        if me and ps:
            best = min(ps, key=lambda d: ps[d]["cpu_us_per_row"])
            r = me["cpu_us_per_row"] / ps[best]["cpu_us_per_row"]
            rows.append(_row("client CPU per row <= 0.25x best peer", key,
                             "%.3f vs %.3f µs/row (%s) = %.2fx"
                             % (me["cpu_us_per_row"], ps[best]["cpu_us_per_row"], best, r),
                             r <= 0.25))
    for key, rep in sorted(((doc.get("replay") or {}).get("scenarios") or {}).items()):
        for kind in ("text", "binary"):
            r = rep[kind]["over_floor"]
            rows.append(_row("replayed decode <= 1.5x floor", "%s (%s rows)" % (key, kind),
                             "%.3f vs %.3f µs/row = %.2fx" % (
                                 rep[kind]["cpu_us_per_row"], rep["floor"]["cpu_us_per_row"],
                                 r), r <= 1.5))
    for key in SCANS:
        me = summ(doc, key, "mysqlc")
        if me and me.get("wall_over_server_cpu"):
            other = summ(doc, key, "mysqlclient") or {}
            ctx = ""
            if other.get("wall_over_server_cpu"):
                ctx = "; mysqlclient %.2fx" % other["wall_over_server_cpu"]
            rows.append(_row("wall <= 1.2x server CPU", key, "%.0f ms wall / %.0f ms server "
                             "= %.2fx%s" % (me["wall_median_s"] * 1e3,
                                            me["server_cpu_median_s"] * 1e3,
                                            me["wall_over_server_cpu"], ctx),
                             me["wall_over_server_cpu"] <= 1.2))
    for key in LOOPS:
        me, ps = summ(doc, key, "mysqlc"), peers(doc, key)
        if me and ps:
            best = max(ps, key=lambda d: ps[d]["per_second"])
            rows.append(_row("round trips/s >= fastest peer", key, "%.0f vs %.0f/s (%s) = %.2fx"
                             % (me["per_second"], ps[best]["per_second"], best,
                                me["per_second"] / ps[best]["per_second"]),
                             me["per_second"] >= ps[best]["per_second"]))
    for key in EXECUTEMANY:
        me, ps = summ(doc, key, "mysqlc"), peers(doc, key)
        if me and ps:
            best = max(ps, key=lambda d: ps[d]["per_second"])
            r = me["per_second"] / ps[best]["per_second"]
            rows.append(_row("executemany rows/s >= 2x fastest peer", key,
                             "%.0f vs %.0f rows/s (%s) = %.2fx"
                             % (me["per_second"], ps[best]["per_second"], best, r), r >= 2.0))
    for key in BUFFERED:
        me, other = summ(doc, key, "mysqlc"), summ(doc, key, "mysqlclient")
        if me and other and me.get("rss_mb_peak") and other.get("rss_mb_peak"):
            rows.append(_row("buffered peak RSS <= mysqlclient's", key,
                             "%.0f vs %.0f MB (growth %+.0f vs %+.0f MB)"
                             % (me["rss_mb_peak"], other["rss_mb_peak"],
                                me["rss_mb_growth"] or 0, other["rss_mb_growth"] or 0),
                             me["rss_mb_peak"] <= other["rss_mb_peak"]))
    for key in sorted(doc["results"]):
        if "_ss" not in key or "@" in key:
            continue
        me = summ(doc, key, "mysqlc")
        if me and me.get("rss_mb_growth") is not None:
            rows.append(_row("unbuffered: RSS growth <= %.0f MB, whatever the size"
                             % UNBUFFERED_MAX_GROWTH_MB, key,
                             "%+.1f MB over %s rows (peak %.0f MB)"
                             % (me["rss_mb_growth"], "{:,}".format(doc["sizes"][key]),
                                me["rss_mb_peak"]),
                             me["rss_mb_growth"] <= UNBUFFERED_MAX_GROWTH_MB))
    return rows


# ---------------------------------------------------------------------------- text

def table(headers, rows, markdown=False):
    """Lines of a plain-text (aligned) or markdown table."""
    if markdown:
        return (["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
                + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    fmt = lambda r: "  ".join(("%-*s" if i == 0 else "%*s") % (w, c)  # noqa: E731
                              for i, (w, c) in enumerate(zip(widths, r)))
    line = fmt(headers)
    return [line, "-" * len(line)] + [fmt(r) for r in rows]


def replay_rows(doc):
    rows = []
    for key, rep in ((doc.get("replay") or {}).get("scenarios") or {}).items():
        e2e = {}
        for suffix, kind in (("", "text"), ("_prepared", "binary")):
            s = summ(doc, key + suffix, "mysqlc")
            e2e[kind] = "%.3f" % s["cpu_us_per_row"] if s else "-"
        for kind in ("text", "binary"):
            r = rep[kind]
            same = rep["same_rows"][kind] and rep["floor_same_types"]
            rows.append([key, kind, "{:,}".format(rep["rows"]), "%.1f" % (rep["bytes"][kind] / 1e6),
                         "%.1f / %.1f" % (r["cpu_best_s"] * 1e3, r["cpu_median_s"] * 1e3),
                         "%.3f" % r["cpu_us_per_row"], "%.3f" % rep["floor"]["cpu_us_per_row"],
                         "%.2f×" % r["over_floor"], e2e[kind], "yes" if same else "NO"])
    return rows


REPLAY_HEADERS = ["scan", "rows", "n", "wire MB", "replay ms best/med", "replay µs/row",
                  "floor µs/row", "replay/floor", "end-to-end µs/row", "same rows"]


def replay_lines(doc, markdown=False):
    rep = doc.get("replay")
    if not rep:
        return []
    out = ["", "== wire replay: mysqlc's decoder on captured server bytes, no server "
               "(CPU, median of %d) beside the floor (benchmarks/_floor.c) ==" % doc.get(
                   "replay_repeat", doc["repeat"])]
    if rep.get("error"):
        return out + ["replay failed: %s" % rep["error"]]
    out += table(REPLAY_HEADERS, replay_rows(doc), markdown)
    out.append("rows text = COM_QUERY response, binary = COM_STMT_EXECUTE response; "
               "end-to-end = mysqlc's client CPU per row against the server (buffered "
               "fetchall, text / prepared cursor)")
    return out


def target_rows(doc):
    return [[t["target"], t["scenario"], t["measured"],
             {True: "yes", False: "**no**", None: "-"}[t["met"]]] for t in doc.get("targets", [])]


def target_lines(doc, markdown=False):
    rows = target_rows(doc)
    if not rows:
        return []
    if not markdown:
        for r in rows:
            r[3] = r[3].replace("**", "").upper() if r[3] != "yes" else "yes"
    return ["", "== targets (issue 3) =="] + table(["target", "scenario", "measured", "met"],
                                                   rows, markdown)


def summary_rows(doc):
    """One row per (plain) scenario: every driver's rows/s and client CPU µs/row."""
    drivers = list(doc["drivers"])
    rows = []
    for run in doc["runs"]:
        key = run["key"]
        cells = [key]
        for d in drivers:
            s = summ(doc, key, d)
            e = doc["results"][key].get(d, {})
            if s:
                cells.append("{:,.0f} / {:.3f}".format(s["per_second"], s["cpu_us_per_row"]))
            else:
                cells.append("n/a" if e.get("skipped") else
                             (e.get("check") or "error") if e else "-")
        me = summ(doc, key, "mysqlc") or {}
        cells.append("%.2f×" % me["wall_over_server_cpu"] if me.get("wall_over_server_cpu")
                     else "-")
        cells.append("%.2f×" % me["cpu_over_floor"] if me.get("cpu_over_floor") else "-")
        rows.append(cells)
    return ["scenario"] + drivers + ["mysqlc wall/server CPU", "mysqlc CPU/floor"], rows


# ---------------------------------------------------------------------------- chart

def chart(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    drivers = list(doc["drivers"])
    keys = [r["key"] for r in doc["runs"] if "@" not in r["key"]]
    rep = ((doc.get("replay") or {}).get("scenarios") or {})
    panels = 3 if rep else 2
    fig, axes = plt.subplots(panels, 1, figsize=(max(12, 0.75 * len(keys)), 5 * panels))
    width = 0.8 / len(drivers)
    for ax, field, label in ((axes[0], "per_second", "rows/s (queries/s for loops); higher is better"),
                             (axes[1], "cpu_us_per_row", "client CPU µs per row (per query); "
                                                         "lower is better")):
        for i, d in enumerate(drivers):
            xs, ys = [], []
            for k, key in enumerate(keys):
                s = summ(doc, key, d)
                if s and s[field] > 0:
                    xs.append(k + (i - (len(drivers) - 1) / 2) * width)
                    ys.append(s[field])
            ax.bar(xs, ys, width, label=d)
        ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(keys, rotation=45, ha="right", fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8, ncol=len(drivers))
    if rep:
        ax = axes[2]
        names = list(rep)
        series = [("replay, text rows", lambda r: r["text"]["cpu_us_per_row"]),
                  ("replay, binary rows", lambda r: r["binary"]["cpu_us_per_row"]),
                  ("floor (object creation only)", lambda r: r["floor"]["cpu_us_per_row"])]
        w = 0.8 / len(series)
        for i, (label, fn) in enumerate(series):
            ax.bar([k + (i - 1) * w for k in range(len(names))], [fn(rep[n]) for n in names],
                   w, label=label)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names)
        ax.set_ylabel("mysqlc decoder CPU µs per row, no server")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("mysqlc benchmark, %s (%s cores), %s" % (
        doc["machine"]["cpu"], doc["machine"]["cores"], doc["started"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


# ---------------------------------------------------------------------------- RESULTS.md

def generated_markdown(doc, chart_path=None, results_path=None):
    out = ["Generated by `%s` on %s (%.0f s; load average %s at the start, %s at the end; "
           "%s)." % (doc.get("command", "bench.py"), doc["started"],
                     doc.get("total_seconds", 0),
                     " ".join("%.2f" % x for x in doc["machine"].get("loadavg_start") or ()),
                     " ".join("%.2f" % x for x in doc["machine"].get("loadavg_end") or ()),
                     "quick sizes" if doc["quick"] else "full sizes"), "", "```"]
    out += doc.get("header", [])
    out += ["```", ""]
    if chart_path and results_path:
        rel = os.path.relpath(chart_path, os.path.dirname(os.path.abspath(results_path)))
        out += ["![rows/s and client CPU per row by driver and scenario](%s)" % rel, ""]
    if doc.get("targets"):
        out += ["### Targets", ""] + target_lines(doc, True)[2:] + [""]
    headers, rows = summary_rows(doc)
    out += ["### All scenarios: rows/s / client CPU µs per row (median)", "",
            "Loops (`select1`, `point*`) count queries; n/a: the driver has no such cursor.",
            ""] + table(headers, rows, True) + [""]
    if doc.get("replay") and not doc["replay"].get("error"):
        out += ["### Wire replay and floor", ""] + replay_lines(doc, True)[2:] + [""]
    if doc.get("problems"):
        out += ["Problems in this run: " + "; ".join(doc["problems"]), ""]
    out += ["<details><summary>Full report (every scenario, every driver)</summary>", "",
            "```"] + [line for line in doc.get("report", []) if line is not None] + \
           ["```", "", "</details>"]
    return "\n".join(out)


def replace_section(path, begin, end, body, title="# mysqlc benchmark results"):
    """Rewrite the part of markdown file ``path`` between the marker lines ``begin`` and
    ``end`` with ``body``; the rest of the file is kept.  Missing markers are added: at
    the top of the file for bench.py's section, after everything else for other scripts'
    (``title`` starts a file that does not exist)."""
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    if begin not in text or end not in text:
        if begin == BEGIN:
            text = "%s\n\n%s\n%s\n" % (title, begin, end) + text
        else:
            text = (text.rstrip("\n") + "\n\n" if text else title + "\n\n") + \
                "%s\n%s\n" % (begin, end)
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + body + "\n" + end + tail)


def write_results(doc, path, chart=None):
    """Replace the generated part of ``path`` (between BEGIN and END) with this run."""
    replace_section(path, BEGIN, END, generated_markdown(doc, chart, path))


def main(argv):
    import argparse
    p = argparse.ArgumentParser(description="chart and RESULTS.md from a bench.py JSON file")
    p.add_argument("json")
    p.add_argument("--chart")
    p.add_argument("--results")
    args = p.parse_args(argv)
    with open(args.json) as f:
        doc = json.load(f)
    doc["targets"] = evaluate_targets(doc)
    print("\n".join(target_lines(doc)))
    if args.chart:
        chart(doc, args.chart)
    if args.results:
        write_results(doc, args.results, args.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
