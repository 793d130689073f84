"""/proc readings shared by the benchmark scripts (Linux)."""

import os

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def server_cpu_seconds(pid):
    """utime+stime of process ``pid`` (all its threads) in seconds, or None (no pid, not
    readable).  Resolution: one clock tick (usually 10 ms)."""
    if not pid:
        return None
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK
