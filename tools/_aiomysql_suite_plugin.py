"""pytest plugin of tools/aiomysql_suite.py (loaded with ``-p`` before aiomysql's
conftest).

With ``MYSQLC_AIOMYSQL_FLAVOUR=1`` it makes ``import aiomysql`` and ``import pymysql``
give mysqlc's flavours (``mysqlc.install_as_aiomysql()``, ``install_as_pymysql()``);
with ``MYSQLC_AIOMYSQL_FLAVOUR=aio`` ``import aiomysql`` gives :mod:`mysqlc.aio` itself
(the count before the flavour existed).
aiomysql's SQLAlchemy 1.3 wrapper ``aiomysql.sa`` is out of scope in both runs: the tests
that use it are deselected (their source says ``sa.``), and for the flavour, which has
no ``aiomysql.sa``, an empty module of that name is registered so that the test modules
that import it at the top (test_async_iter, test_async_with) load their other tests.

Each phase of a test (setup, call, teardown) gets ``MYSQLC_SUITE_TEST_TIMEOUT`` seconds
(default 60, SIGALRM; an event loop running then is stopped, which fails its
run_until_complete): a pool fixture whose teardown waits for a connection that a
failed test never released (``wait_closed()``) fails that test instead of stopping the
run.
"""

import asyncio
import inspect
import os
import re
import signal
import sys
import types

import pytest

_MODE = os.environ.get("MYSQLC_AIOMYSQL_FLAVOUR")
if _MODE in ("1", "aio"):
    import mysqlc
    mysqlc.install_as_pymysql()
    if _MODE == "1":
        aiomysql = mysqlc.install_as_aiomysql()
    else:
        # the "before" count: mysqlc.aio itself (mysqlclient's semantics) as aiomysql
        import mysqlc.aio
        import mysqlc.aio.connection
        import mysqlc.aio.cursors
        import mysqlc.aio.pool
        aiomysql = mysqlc.aio
        sys.modules.update({"aiomysql": mysqlc.aio,
                            "aiomysql.connection": mysqlc.aio.connection,
                            "aiomysql.cursors": mysqlc.aio.cursors,
                            "aiomysql.pool": mysqlc.aio.pool})
    placeholder = types.ModuleType("aiomysql.sa", "aiomysql.sa is not part of the flavour "
                                   "(the suite's tests of it are deselected)")
    sys.modules["aiomysql.sa"] = placeholder
    aiomysql.sa = placeholder

_USES_SA = re.compile(r"\bsa\.")


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        func = getattr(item, "function", None)
        try:
            source = inspect.getsource(func) if func is not None else ""
        except (OSError, TypeError):
            source = ""
        (drop if _USES_SA.search(source) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class PhaseTimeout(Exception):
    """A test phase took longer than MYSQLC_SUITE_TEST_TIMEOUT seconds."""


_LIMIT = float(os.environ.get("MYSQLC_SUITE_TEST_TIMEOUT", "60"))


def _bounded(phase):
    def fire(signum, frame):
        # an event loop waiting (run_until_complete) is stopped: raising from the handler
        # can land in a callback, which the loop catches and logs (and uvloop runs
        # Python signal handlers from its own loop)
        loop = asyncio._get_running_loop()
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)   # wakes its select() too
            return
        raise PhaseTimeout("%s took longer than %g s" % (phase, _LIMIT))

    @pytest.hookimpl(hookwrapper=True)
    def hook(item, **kwargs):
        old = signal.signal(signal.SIGALRM, fire)
        signal.setitimer(signal.ITIMER_REAL, _LIMIT, 1.0)   # again each second
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    return hook


pytest_runtest_setup = _bounded("setup")
pytest_runtest_call = _bounded("the test")
pytest_runtest_teardown = _bounded("teardown")
