"""``MySQLdb._mysql`` (mysqlc._lowlevel) compared with mysqlclient's real ``_mysql``
on the same server."""

import datetime
from decimal import Decimal

import pytest

import MySQLdb._mysql as real
import MySQLdb.converters as real_converters

from mysqlc import _lowlevel as low
from mysqlc import converters as mconverters
from mysqlc.constants import CLIENT

QUERY = ("SELECT 1 AS a, 'x' AS b, NULL AS n, 1.5 AS d, "
         "CAST('2024-02-29 10:11:12' AS DATETIME) AS dt, CAST('ab' AS BINARY) AS c, "
         "CAST('-25:00:01' AS TIME) AS t, 1e0 AS f, 'é' AS u, "
         "CAST('0000-00-00' AS DATE) AS z")


def _kw(conn_kwargs, **extra):
    kw = {k: v for k, v in conn_kwargs.items()}
    kw.update(extra)
    return kw


@pytest.fixture
def pair(conn_kwargs):
    a = low.connect(**_kw(conn_kwargs))
    b = real.connect(**_kw(conn_kwargs))
    yield a, b
    for c in (a, b):
        if c.open:
            c.close()


def _both(pair, fn):
    return [fn(c) for c in pair]


def test_module_surface():
    for name in ("connect", "connection", "result", "escape", "escape_string",
                 "string_literal", "get_client_info", "debug", "version_info",
                 "MySQLError", "Warning", "Error", "InterfaceError", "DatabaseError",
                 "DataError", "OperationalError", "IntegrityError", "InternalError",
                 "ProgrammingError", "NotSupportedError"):
        assert hasattr(low, name) and hasattr(real, name), name
    assert low.__version__ == "2.2.0"
    assert low.escape_string("a'b") == real.escape_string("a'b") == b"a\\'b"
    assert low.string_literal("a") == real.string_literal("a") == b"'a'"


def test_store_result_values_and_metadata(pair):
    out = []
    for c in pair:
        c.query(QUERY)
        r = c.store_result()
        out.append((r.describe(), r.num_rows(), r.num_fields(), r.field_flags(),
                    r.fetch_row(), r.fetch_row(0), r.fetch_row()))
    assert out[0] == out[1]
    assert out[0][4][0][0] == b"1" and out[0][4][0][2] is None


def test_use_result_and_how(pair):
    for how in (0, 1, 2):
        got = []
        for c in pair:
            c.query("SELECT 1 AS a, 2 AS a UNION SELECT 3, 4")
            r = c.use_result()
            got.append((r.describe(), r.fetch_row(how=how), r.num_rows(),
                        r.fetch_row(maxrows=5, how=how), r.num_rows(), r.fetch_row()))
        assert got[0] == got[1], how


def test_conv_dict(conn_kwargs):
    got = []
    for mod in (low, real):
        c = mod.connect(conv=real_converters.conversions, **_kw(conn_kwargs))
        c.query(QUERY)
        got.append(c.store_result().fetch_row()[0])
        c.query("SELECT 1, 'x', 1.5")
        c.close()
    low_row, real_row = got
    assert low_row == real_row
    assert low_row[0] == 1 and low_row[3] == Decimal("1.5")
    assert low_row[4] == datetime.datetime(2024, 2, 29, 10, 11, 12)
    assert low_row[6] == -datetime.timedelta(hours=25, seconds=1)
    # mysqlc's own conversions dict: its (FLAG.BINARY, bytes), (None, str) entries
    c = low.connect(conv=mconverters.conversions, **_kw(conn_kwargs))
    c.query("SELECT 'x', CAST('ab' AS BINARY)")
    assert c.store_result().fetch_row() == (("x", b"ab"),)
    c.close()
    # a partial dict: int for LONG only, the rest bytes
    rows = []
    for mod in (low, real):
        c = mod.connect(conv={3: int, 246: [(None, Decimal)]}, **_kw(conn_kwargs))
        c.query("SELECT 1, 'x', 1.5, CAST(7 AS SIGNED)")
        rows.append(c.store_result().fetch_row())
        c.close()
    assert rows[0] == rows[1] == ((1, b"x", Decimal("1.5"), 7),)


def test_statements_without_results_and_ids(pair):
    got = []
    for c in pair:
        c.query("CREATE TEMPORARY TABLE t (i INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(5))")
        first = (c.store_result(), c.field_count())
        c.query("INSERT INTO t (s) VALUES ('a'), ('b')")
        got.append((first, c.store_result(), c.affected_rows(), c.insert_id(), c.info(),
                    c.warning_count(), c.next_result()))
    assert got[0] == got[1]
    assert got[0][2:4] == (2, 1)


def test_multi_statements_next_result(conn_kwargs):
    got = []
    for mod in (low, real):
        c = mod.connect(client_flag=CLIENT.MULTI_STATEMENTS, **_kw(conn_kwargs))
        c.query("SELECT 1; SELECT 2; DO 3")
        seq = [c.store_result().fetch_row(), c.next_result(), c.store_result().fetch_row(),
               c.next_result(), c.store_result(), c.next_result()]
        got.append(seq)
        c.close()
    assert got[0] == got[1] == [((b"1",),), 0, ((b"2",),), 0, None, -1]


def test_commands_out_of_sync_and_errors(pair):
    for c in pair:
        c.query("SELECT 1")
        with pytest.raises(real.ProgrammingError if c is pair[1] else low.ProgrammingError) as e:
            c.query("SELECT 2")
        assert e.value.args[0] == 2014


def test_server_error_class(pair):
    errs = []
    for c in pair:
        try:
            c.query("SELECT * FROM no_such_table_here")
        except Exception as e:      # noqa: BLE001 - comparing the classes by name
            errs.append((type(e).__name__, e.args[0]))
    assert errs[0] == errs[1] == ("ProgrammingError", 1146)


def test_connection_methods(pair):
    a, b = pair
    for name in ("get_server_info", "character_set_name", "get_proto_info",
                 "get_host_info", "get_autocommit"):
        assert getattr(a, name)() == getattr(b, name)(), name
    assert isinstance(a.thread_id(), int) and a.thread_id() != b.thread_id()
    assert a.ping() is None and b.ping() is None
    assert a.autocommit(False) is None
    assert a.get_autocommit() is False
    a.autocommit(True)
    a.commit(), a.rollback()
    assert a.escape("a'b", {}) == b.escape("a'b", {}) == b"'a\\'b'"
    assert a.escape(1, {}) == b.escape(1, {}) == b"'1'"
    conv = real_converters.conversions
    for value in (1, None, 1.5, (1, "a"), datetime.date(2020, 1, 2)):
        assert a.escape(value, conv) == b.escape(value, conv), value
    assert a.escape_string(b"\x00a'") == b.escape_string(b"\x00a'")
    assert a.string_literal("x") == b.string_literal("x")
    assert a.open == b.open == 1
    assert a.server_capabilities == b.server_capabilities
    assert isinstance(a.fileno(), int) and a.fileno() >= 0


def test_closed_connection(pair):
    for c in pair:
        c.close()
        assert c.open == 0
        for op in (lambda: c.query("SELECT 1"), c.close, c.ping, c.thread_id,
                   c.affected_rows, c.character_set_name):
            with pytest.raises(Exception) as e:
                op()
            assert type(e.value).__name__ == "OperationalError"
            assert e.value.args[0] == 2006


def test_registered_as_MySQLdb_mysql():
    import sys
    saved = {k: v for k, v in sys.modules.items() if k == "MySQLdb" or k.startswith("MySQLdb.")}
    try:
        import mysqlc
        mysqlc.install_as_MySQLdb()
        from MySQLdb import _mysql
        assert _mysql is low
        assert sys.modules["MySQLdb._mysql"].connect is low.connect
    finally:
        for k in [k for k in sys.modules if k == "MySQLdb" or k.startswith("MySQLdb.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def test_bad_arguments(pair):
    for c in pair:
        for q in (123, None):
            with pytest.raises(TypeError):
                c.query(q)
        c.query("SELECT 1")
        r = c.store_result()
        with pytest.raises(ValueError):
            r.fetch_row(how=5)
        with pytest.raises(TypeError):
            r.fetch_row(how="x")
        assert r.fetch_row() == ((b"1",),)
    with pytest.raises(ValueError):
        r2 = pair[0]
        r2.query("SELECT 1")
        r2.store_result().fetch_row(-1)


def test_errno_error_sqlstate_stat_change_user(pair, root_conn_kwargs):
    """Scripts on ``_mysql`` read the last error with ``errno()`` / ``error()`` /
    ``sqlstate()`` and use ``stat()`` / ``change_user()``, as on mysqlclient's."""
    got = []
    for c in pair:
        rec = [(c.errno(), c.error(), c.sqlstate())]
        for sql in ("SELEC 1", "SELECT * FROM no_such_table_ll"):
            with pytest.raises(real.ProgrammingError if c is pair[1] else low.ProgrammingError):
                c.query(sql)
            rec.append((c.errno(), c.error(), c.sqlstate()))
        c.query("SELECT 1")
        c.store_result().fetch_row()
        rec.append((c.errno(), c.error(), c.sqlstate()))
        rec.append(c.stat().startswith("Uptime: "))
        c.change_user(root_conn_kwargs["user"], root_conn_kwargs.get("password") or "",
                      root_conn_kwargs.get("database"))
        c.query("SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)")
        rec.append(c.store_result().fetch_row())
        got.append(rec)
    assert got[0] == got[1]
    assert got[0][1][:2] == (1064, got[0][1][1]) and got[0][1][2] == "42000"
    assert got[0][2][0] == 1146 and got[0][2][2] == "42S02"
    assert got[0][3] == (0, "", "00000")
    assert got[0][5] == ((root_conn_kwargs["user"].encode(),),)


def test_result_type_and_closed(pair):
    for mod in (low, real):
        with pytest.raises(TypeError):
            mod.result(b"xyz")
        fresh = mod.connection.__new__(mod.connection)
        assert fresh.closed == 1 and fresh.open == 0
    for c in pair:
        assert c.closed == 0
        c.close()
        assert c.closed == 1
