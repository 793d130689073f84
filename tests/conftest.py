"""Shared pytest fixtures: a MariaDB/MySQL server and connections to it.

- ``server`` (session): ``mysqlc.server.get_server()`` — the server named by
  ``MYSQLC_TEST_DSN``, else a private ``mariadbd`` started for this session.
  When none is available the tests using it are skipped, except under CI
  (env ``CI`` = true/1), where they fail.
- ``conn_kwargs`` / ``root_conn_kwargs``: ``mysqlc.connect`` keyword arguments
  for the test account / the account with global privileges.
- ``conn``: a ``mysqlc`` connection for one test, closed afterwards.

Under CI every skipped test counts as a failure unless it is marked
``@pytest.mark.allow_skip`` (``pytestmark = pytest.mark.allow_skip`` marks a whole
module's tests); a module skipped at import time always fails under CI.
Tests that use the server are marked ``server`` automatically, so
``pytest -m "not server"`` runs the unit tests alone.
"""

import os

import pytest

from mysqlc.server import ServerNotAvailable, find_server_binary, get_server

IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "allow_skip: this test may skip even under CI (e.g. platform-specific)")
    config.addinivalue_line(
        "markers", "server: the test needs a MariaDB/MySQL server (set automatically)")


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
