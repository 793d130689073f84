"""Shared pytest fixtures: a MariaDB/MySQL server and connections to it.

- ``server`` (session): ``mysqlc.server.get_server()`` — the server named by
  ``MYSQLC_TEST_DSN``, else a private ``mariadbd`` started for this session.
  When none is available the tests using it are skipped, except under CI
  (env ``CI`` = true/1), where they fail.
- ``conn_kwargs`` / ``root_conn_kwargs``: ``mysqlc.connect`` keyword arguments
  for the test account / the account with global privileges.
- ``conn``: a ``mysqlc`` connection for one test, closed afterwards.
- ``api`` (autouse): "sync", or "aio" in the second run of each test of a module marked
  ``pytestmark = pytest.mark.both_apis`` -- there ``mysqlc.connect`` opens a
  ``mysqlc.aio`` connection behind a synchronous proxy for the test's duration
  (tests/_apis.py).  ``@pytest.mark.sync_only(reason)`` keeps a test to one run.

Under CI every skipped test counts as a failure unless it is marked
``@pytest.mark.allow_skip`` (``pytestmark = pytest.mark.allow_skip`` marks a whole
module's tests); a module skipped at import time always fails under CI.
Tests that use the server are marked ``server`` automatically, so
``pytest -m "not server"`` runs the unit tests alone.
"""

import os
import signal

import pytest

from mysqlc.server import ServerNotAvailable, find_server_binary, get_server

# A suite started in the background (`cmd &` from a script, nohup) inherits SIGINT as
# ignored: Python then installs no KeyboardInterrupt handler, and the Ctrl-C tests could
# not deliver one, neither in this process (tests/test_pipeline.py) nor in the
# subprocesses they start (tests/test_timeouts.py: an ignored signal stays ignored
# across exec, a handled one does not).  They need the handler an interactive run has.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "allow_skip: this test may skip even under CI (e.g. platform-specific)")
    config.addinivalue_line(
        "markers", "server: the test needs a MariaDB/MySQL server (set automatically)")
    config.addinivalue_line(
        "markers", "both_apis: run each test with mysqlc.connect and with mysqlc.aio "
        "(tests/_apis.py)")
    config.addinivalue_line(
        "markers", "sync_only(reason): in a both_apis module, this test runs on the sync "
        "API only, for the reason given")


def pytest_generate_tests(metafunc):
    definition = metafunc.definition
    if definition.get_closest_marker("both_apis") is None:
        return
    only = definition.get_closest_marker("sync_only")
    if only is not None:
        if not (only.args or only.kwargs.get("reason")):
            raise pytest.UsageError("%s: sync_only needs a reason" % definition.nodeid)
        return
    from _apis import HAVE_AIO
    # without greenlet (an installed package without the aio extra: the wheel and matrix
    # smoke runs) there is no asyncio API to run; the source-tree suite installs it, and
    # there tests/test_aio.py fails at import under CI if it is missing
    metafunc.parametrize("api", ["sync", "aio"] if HAVE_AIO else ["sync"], indirect=True)


def pytest_report_header(config):
    dsn = os.environ.get("MYSQLC_TEST_DSN")
    if dsn:
        where = "external server from MYSQLC_TEST_DSN"
    else:
        where = "private server from %s" % (find_server_binary() or "<no mariadbd/mysqld found>")
    return "mysqlc: %s%s" % (where, "; CI: skips count as failures" if IN_CI else "")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.server)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (IN_CI and report.skipped and not hasattr(report, "wasxfail")
            and item.get_closest_marker("allow_skip") is None):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = ("skipped under CI, which counts as a failure (mark the test "
                           "@pytest.mark.allow_skip if the skip is legitimate): %s" % (reason,))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # A whole module skipped at import (pytest.importorskip, allow_module_level=True)
    # also fails under CI; skip inside the tests and mark them allow_skip instead.
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = ("module skipped under CI, which counts as a failure (skip in the "
                           "tests and mark them @pytest.mark.allow_skip instead): %s" % (reason,))


@pytest.fixture(scope="session")
def server():
    """The MariaDB/MySQL server for this test session (see mysqlc.server)."""
    try:
        try:
            srv = get_server().start()
        except ServerNotAvailable as first:
            # a loaded machine can make a start time out once; a binary that is missing
            # fails the same way again at once
            print("private server did not start, retrying once: %s" % first)
            srv = get_server().start()
    except ServerNotAvailable as exc:
        if IN_CI:
            pytest.fail("no MariaDB/MySQL server under CI: %s" % exc, pytrace=False)
        pytest.skip("no MariaDB/MySQL server: %s" % exc)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(autouse=True)
def api(request, monkeypatch):
    """Which API ``mysqlc.connect`` gives this test: "sync", or "aio" (see above)."""
    name = getattr(request, "param", "sync")
    if name != "aio":
        yield name
        return
    from _apis import aio_patched
    with aio_patched(monkeypatch):
        yield name


@pytest.fixture
def conn_kwargs(server):
    return server.connect_kwargs()


@pytest.fixture
def root_conn_kwargs(server):
    return server.connect_kwargs(root=True)


@pytest.fixture
def conn(conn_kwargs):
    import mysqlc
    c = mysqlc.connect(**conn_kwargs)
    try:
        yield c
    finally:
        try:
            c.close()
        except getattr(mysqlc, "Error", Exception):
            pass   # the test closed it already
