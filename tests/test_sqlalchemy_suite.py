"""SQLAlchemy's dialect compliance suite against the test server, in a subprocess.

``tests/sqla/`` holds the suite's setup (see its README.md): it is a pytest root
of its own, because SQLAlchemy's testing plugin takes over the pytest session.
Four runs:

* ``mariadb+mysqlc`` -- mysqlc's native dialect (``mysqlc.sqlalchemy_dialect``);
* ``mariadb+mysqlc_prepared`` -- the same with ``prepared=True`` (server-side
  prepared statements; the name is registered by tests/sqla/sqla_plugin.py);
* ``mysql+mysqldb`` with ``mysqlc.install_as_MySQLdb()`` -- SQLAlchemy's stock
  mysqlclient dialect running on mysqlc.
* ``mariadb+mysqlc_async`` -- the asyncio dialect (``mysqlc.sqlalchemy_aio`` on
  ``mysqlc.aio``); SQLAlchemy's plugin then runs each test in a greenlet on an
  event loop.

Each must finish without failures or errors; the pass/skip counts are attached
to the test report (``record_property``) and printed with ``-rA``.  A run takes
20-40 s on two cores (with SQLAlchemy 2.1.9, 1586 tests pass and 231 are
skipped by tests/sqla/requirements.py).  The async run must have the same
outcome as the ``mariadb+mysqlc`` run for every test.
"""

import os
import re
import subprocess
import sys
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import mysqlc

SUITE_DIR = Path(__file__).resolve().parent / "sqla"
SUITE_DB = "mysqlc_sqla_suite"
SCHEMAS = ("test_schema", "test_schema_2")   # the suite's names for other schemas
TIMEOUT = 480                                # seconds per run
MIN_PASSED = 1000                            # a run that passes fewer did not really run


@pytest.fixture(scope="module")
def suite_url_parts(server):
    """Create the suite's databases (with the account that has global privileges)
    and return (user, password, host, port) for the suite's URL."""
    kw = server.connect_kwargs(root=True)
    conn = mysqlc.connect(**kw)
    try:
        cur = conn.cursor()
        for name in (SUITE_DB,) + SCHEMAS:
            cur.execute("DROP DATABASE IF EXISTS `%s`" % name)
            cur.execute("CREATE DATABASE `%s` CHARACTER SET utf8mb4" % name)
    finally:
        conn.close()
    yield kw["user"], kw["password"], kw["host"], kw["port"]
    conn = mysqlc.connect(**kw)
    try:
        cur = conn.cursor()
        for name in (SUITE_DB,) + SCHEMAS:
            cur.execute("DROP DATABASE IF EXISTS `%s`" % name)
    finally:
        conn.close()


def _run_suite(url, tmp_path, extra_env=None):
    junit = tmp_path / "suite.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    # the subprocess imports the same mysqlc as this process (e.g. a sanitizer build)
    root = str(Path(mysqlc.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    env.update(extra_env or {})
    cmd = [sys.executable, "-m", "pytest", "-p", "sqla_plugin", "--dburi", url,
           "-q", "-rfE", "--junitxml", str(junit)]
    proc = subprocess.run(cmd, cwd=SUITE_DIR, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    outcomes = {}
    if junit.exists():
        root = ET.parse(junit).getroot()
        suite = root if root.tag == "testsuite" else root.find("testsuite")
        for key in counts:
            counts[key] = int(suite.get(key, 0))
        for case in suite.iter("testcase"):
            outcomes[_test_id(case)] = next(
                (tag for tag in ("skipped", "failure", "error")
                 if case.find(tag) is not None), "passed")
    counts["passed"] = (counts["tests"] - counts["failures"] - counts["errors"]
                        - counts["skipped"])
    return proc, counts, outcomes


def _test_id(case):
    # the plugin names each test class after the URL and server version
    # ("ServerSideCursorsTest_mariadb+mysqlc_async_10_11_19"): drop that suffix
    cls = re.sub(r"_[a-z]+\+[a-z_]+?(_\d+)+$", "", case.get("classname", ""))
    return "%s::%s" % (cls, case.get("name"))


_OUTCOMES = {}   # driver -> {test id: outcome}, for the sync/async comparison


@pytest.mark.parametrize("driver", ["mariadb+mysqlc", "mariadb+mysqlc_prepared",
                                    "mysql+mysqldb", "mariadb+mysqlc_async"])
def test_sqlalchemy_compliance_suite(driver, suite_url_parts, tmp_path, record_property):
    pytest.importorskip("sqlalchemy")
    user, password, host, port = suite_url_parts
    url = "%s://%s:%s@%s:%d/%s?charset=utf8mb4" % (
        driver, urllib.parse.quote(user, safe=""), urllib.parse.quote(password, safe=""),
        host, port, SUITE_DB)
    extra = {"MYSQLC_INSTALL_AS_MYSQLDB": "1"} if driver.endswith("+mysqldb") else None
    proc, counts, outcomes = _run_suite(url, tmp_path, extra)
    _OUTCOMES[driver] = outcomes
    for key, value in counts.items():
        record_property(key, value)
    summary = "%s: %d passed, %d failed, %d errors, %d skipped" % (
        driver, counts["passed"], counts["failures"], counts["errors"], counts["skipped"])
    print(summary)
    tail = "\n".join(proc.stdout.splitlines()[-120:])
    assert counts["failures"] == 0 and counts["errors"] == 0, summary + "\n" + tail
    assert proc.returncode == 0, summary + "\n" + tail
    assert counts["passed"] >= MIN_PASSED, summary + "\n" + tail
    sync = _OUTCOMES.get("mariadb+mysqlc")
    if driver == "mariadb+mysqlc_async" and sync:
        # the asyncio dialect passes and skips exactly what the sync one does
        # (tests/sqla/README.md)
        differ = sorted(k for k in set(sync) | set(outcomes)
                        if sync.get(k) != outcomes.get(k))
        assert not differ, "sync/async outcomes differ: %s" % differ[:20]
