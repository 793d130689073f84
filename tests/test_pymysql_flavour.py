"""The PyMySQL flavour through ``mysqlc.install_as_pymysql()`` / ``import pymysql``,
side by side with the real PyMySQL on the same server."""

import datetime
import importlib
import os
import sys
import warnings
from decimal import Decimal

import pytest

import mysqlc
from mysqlc.server import PrivateServer, ServerNotAvailable

from _certs import CertsUnavailable, make_certs


def _pymysql_modules():
    return {k: v for k, v in sys.modules.items() if k == "pymysql" or k.startswith("pymysql.")}


@pytest.fixture
def real_pymysql():
    """The real PyMySQL package (imported outside the flavour)."""
    saved = _pymysql_modules()
    for k in saved:
        del sys.modules[k]
    try:
        mod = importlib.import_module("pymysql")
        importlib.import_module("pymysql.cursors")
        assert not getattr(mod, "mysqlc_flavour", False)
        yield mod
    finally:
        for k in list(_pymysql_modules()):
            del sys.modules[k]
        sys.modules.update(saved)


@pytest.fixture
def flavour():
    """``import pymysql`` after install_as_pymysql(); sys.modules restored after."""
    saved = _pymysql_modules()
    try:
        mysqlc.install_as_pymysql()
        import pymysql
        yield pymysql
    finally:
        for k in list(_pymysql_modules()):
            del sys.modules[k]
        sys.modules.update(saved)


@pytest.fixture
def both(flavour, conn_kwargs):
    # the real package is imported by path inside the flavour's lifetime
    saved = _pymysql_modules()
    for k in saved:
        del sys.modules[k]
    real = importlib.import_module("pymysql")
    importlib.import_module("pymysql.cursors")
    real_modules = _pymysql_modules()
    for k in real_modules:
        del sys.modules[k]
    sys.modules.update(saved)
    conns = [mod.connect(**conn_kwargs) for mod in (flavour, real)]
    yield (flavour, real), conns
    for c in conns:
        if c.open:
            c.close()


def test_install_registers_modules(flavour):
    import pymysql.connections
    import pymysql.constants.CLIENT
    import pymysql.converters
    import pymysql.cursors
    import pymysql.err
    import pymysql.times
    assert pymysql.__name__ == "pymysql"
    assert pymysql.connect is mysqlc.pymysql.connections.Connection
    assert pymysql.cursors.DictCursor is mysqlc.pymysql.cursors.DictCursor
    assert pymysql.err.OperationalError is mysqlc.OperationalError
    assert pymysql.constants.CLIENT is mysqlc.constants.CLIENT
    assert pymysql.NULL == "NULL" and pymysql.thread_safe() is True
    assert pymysql.paramstyle == "pyformat"
    assert mysqlc.install_as_pymysql() is sys.modules["pymysql"]   # idempotent


def test_restores_real_pymysql(real_pymysql, conn_kwargs):
    # the fixtures leave the real package importable for other tests
    c = real_pymysql.connect(**conn_kwargs)
    assert not isinstance(c, mysqlc.Connection)
    c.close()


def test_escape_literal_str_like_pymysql(both):
    (flav, real), (a, b) = both
    values = ["a'b\\\n\x00\x1a\"", b"\x00\xffab", 1, 1.5, -0.0, True, None,
              Decimal("1.50"), datetime.date(2020, 1, 2),
              datetime.datetime(2020, 1, 2, 3, 4, 5, 6),
              datetime.timedelta(days=-1, seconds=5, microseconds=7),
              datetime.time(1, 2, 3), (1, "a", None), [b"x", 2], {1, 2} - {2},
              frozenset(["q"])]
    for v in values:
        assert a.escape(v) == b.escape(v), v
        assert isinstance(a.escape(v), str)
    for v in ({"a": 1}, float("inf")):
        with pytest.raises((TypeError, flav.err.ProgrammingError)) as ea:
            a.escape(v)
        with pytest.raises((TypeError, real.err.ProgrammingError)) as eb:
            b.escape(v)
        assert type(ea.value).__name__ == type(eb.value).__name__
    with pytest.raises(TypeError):
        a.escape(object(), {})            # no encoder and no str entry
    # the mapping is used for the items
    mapping = dict(flav.converters.encoders)
    mapping[int] = lambda v, m: "INT%d" % v
    assert a.escape((1, 2), mapping) == "(INT1,INT2)"
    assert a.escape(object(), {str: lambda v, m: "'obj'"}) == "'obj'"
    with pytest.warns(DeprecationWarning):
        assert a.literal("x") == "'x'"
    assert a.escape_string("a'b") == "a\\'b"
    assert a.encoding == b.encoding == "utf8"
    assert a.get_server_info() == b.get_server_info() == b.server_version == a.server_version
    assert (a.protocol_version, a.character_set_name(), a.charset, a.host, a.port) == \
        (b.protocol_version, b.character_set_name(), b.charset, b.host, b.port)
    for c in (a, b):
        cur = c.cursor()
        cur.execute("SELECT CAST('x' AS SIGNED)")
    assert a.show_warnings() == b.show_warnings()


def test_converters_module(flavour):
    import pymysql.converters as c
    assert c.convert_datetime("2007-02-25 23:06:20") == datetime.datetime(2007, 2, 25, 23, 6, 20)
    assert c.convert_datetime(b"2007-02-25T23:06:20.5") == datetime.datetime(
        2007, 2, 25, 23, 6, 20, 500000)
    assert c.convert_datetime("0000-00-00 00:00:00") == "0000-00-00 00:00:00"
    assert c.convert_datetime("2007-02-31T23:06:20") == "2007-02-31T23:06:20"
    assert c.convert_timedelta("25:06:17") == datetime.timedelta(days=1, seconds=3977)
    assert c.convert_timedelta("-25:06:17") == -datetime.timedelta(days=1, seconds=3977)
    assert c.convert_timedelta("random crap") == "random crap"
    assert c.convert_time("15:06:17") == datetime.time(15, 6, 17)
    assert c.convert_time("-25:06:17") == "-25:06:17"
    assert c.convert_date("2007-02-26") == datetime.date(2007, 2, 26)
    assert c.convert_date("0000-00-00") == "0000-00-00"
    assert c.escape_string("\0\\\n\r\x1a\"'") == "\\0\\\\\\n\\r\\Z\\\"\\'"
    assert c.escape_item(None) == "NULL"
    with pytest.raises(TypeError):
        c.escape_item({"a": 1})


def test_converters_match_real(both):
    (flav, real), _ = both
    fc = sys.modules["pymysql.converters"]
    rc = real.converters
    samples = ["2007-02-25 23:06:20", "2007-02-25T23:06:20.123", "0000-00-00 00:00:00",
               "2007-02-31", "25:06:17", "-838:59:59.5", "15:06:17", "x", b"12:00:00"]
    for s in samples:
        for name in ("convert_datetime", "convert_timedelta", "convert_time", "convert_date"):
            assert getattr(fc, name)(s) == getattr(rc, name)(s), (name, s)
    for v in (datetime.timedelta(days=-2, seconds=3, microseconds=4), datetime.time(0, 0),
              datetime.datetime(1, 1, 1), 2.5, True, b"\x01"):
        enc = type(v)
        assert fc.encoders[enc](v) == rc.encoders[enc](v), v


def test_dictcursor_lists_and_fetch_semantics(both, conn_kwargs):
    (flav, real), conns = both
    out = []
    for mod, c in zip((flav, real), conns):
        cur = c.cursor(mod.cursors.DictCursor)
        fresh = (cur.rownumber, cur.rowcount, cur.description, cur.arraysize)
        with pytest.raises(mod.err.ProgrammingError):
            cur.fetchone()
        cur.execute("SELECT 1 AS a UNION SELECT 2 UNION SELECT 3")
        first = cur.fetchmany(2)
        rest = cur.fetchall()
        cur.execute("SELECT 1 AS a FROM DUAL WHERE 0")
        empty = cur.fetchall()
        cur.execute("DO 1")
        none = (cur.fetchone(), cur.fetchmany(), cur.fetchall())
        plain = c.cursor()
        plain.execute("SELECT 1 UNION SELECT 2")
        it = iter(plain)
        out.append((first, rest, empty, none, it is plain, next(plain), plain.fetchall(),
                    type(first).__name__, plain.rowcount, fresh))
    assert out[0] == out[1]
    assert out[0][0] == [{"a": 1}, {"a": 2}] and out[0][3] == (None, (), [])


def test_sscursor_rowcount_fetchall_unbuffered(both):
    (flav, real), conns = both
    out = []
    for mod, c in zip((flav, real), conns):
        cur = c.cursor(mod.cursors.SSCursor)
        cur.execute("SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4")
        gen = cur.fetchall_unbuffered()
        one = next(gen)
        many = cur.fetchmany(2)
        rest = cur.fetchall()
        end = cur.fetchmany()
        out.append((one, many, rest, end, cur.rowcount, iter(cur) is cur))
        cur.execute("SELECT 1 UNION SELECT 2")
        out.append((cur.rowcount, list(cur), cur.rowcount))
    assert out[0] == out[2] and out[1] == out[3]
    assert out[0][4] == 18446744073709551615


def test_unbuffered_discard_warns(both):
    (flav, real), conns = both
    seen = []
    for mod, c in zip((flav, real), conns):
        ss = c.cursor(mod.cursors.SSCursor)
        ss.execute("SELECT 1 UNION SELECT 2 UNION SELECT 3")
        ss.fetchone()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cur = c.cursor()
            cur.execute("SELECT 42")
            seen.append(([str(x.message) for x in w if x.category is UserWarning],
                         cur.fetchall(), ss.fetchone()))
    assert seen[0] == seen[1]
    assert seen[0][0] == ["Previous unbuffered result was left incomplete"]


def test_fetchall_after_failed_nextset(both, conn_kwargs):
    (flav, real), _ = both
    results = []
    for mod in (flav, real):
        c = mod.connect(client_flag=mod.constants.CLIENT.MULTI_STATEMENTS, **conn_kwargs)
        cur = c.cursor()
        cur.execute("SELECT 1; SELECT * FROM no_such_table_x")
        first = cur.fetchall()
        with pytest.raises(mod.err.ProgrammingError) as e:
            cur.nextset()
        results.append((first, e.value.args[0], cur.fetchall(), cur.fetchone(),
                        cur.fetchmany()))
        c.close()
    assert results[0] == results[1] == (((1,),), 1146, [], None, ())


def test_defer_connect_open_closed_fileno_ping(flavour, conn_kwargs):
    c = flavour.connect(defer_connect=True, **conn_kwargs)
    assert c.open is False and c.closed is True and c.host_info == "Not connected"
    c.connect()
    assert c.open is True and c.closed is False
    assert isinstance(c.fileno(), int) and c.fileno() > 2
    assert c.ping() is None
    assert c.server_thread_id == (c.thread_id(),)
    c.close()
    with pytest.raises(flavour.err.Error, match="Already closed"):
        c.close()
    with pytest.raises(flavour.err.Error, match="Already closed"):
        c.ping()
    with pytest.warns(DeprecationWarning):
        c.ping(reconnect=True)
    assert c.open
    c.close()
    with pytest.raises(flavour.err.InterfaceError):
        c.fileno()


def test_connect_arguments(flavour, conn_kwargs):
    kw = dict(conn_kwargs)
    pw, db = kw.pop("password"), kw.pop("database")
    with pytest.warns(DeprecationWarning):
        c = flavour.connect(passwd=pw, db=db, init_command="SET @x = 7",
                            sql_mode="ANSI_QUOTES", autocommit=True, program_name="flav",
                            max_allowed_packet=1 << 20, read_timeout=30,
                            write_timeout=30, binary_prefix=True, local_infile=False,
                            client_flag=0, **kw)
    cur = c.cursor()
    cur.execute("SELECT @x, @@sql_mode, @@autocommit, DATABASE()")
    x, mode, ac, database = cur.fetchone()
    assert x == 7 and "ANSI_QUOTES" in mode and ac == 1 and database == db
    assert c.max_allowed_packet == 1 << 20 and c.get_autocommit() is True
    # multi statements are off by default, as PyMySQL
    with pytest.raises(flavour.err.ProgrammingError):
        cur.execute("SELECT 1; SELECT 2")
    c.close()
    with pytest.raises(ValueError):
        flavour.connect(connect_timeout=0, **conn_kwargs)
    with pytest.raises(ValueError):
        flavour.connect(read_timeout=-1, **conn_kwargs)
    with pytest.raises(ValueError):
        flavour.connect(**dict(conn_kwargs, port="3306"))
    for bad in ({"bind_address": "127.0.0.1"}, {"ssl_key_password": "x"},
                {"auth_plugin_map": {"dialog": object}}):
        with pytest.raises(flavour.err.NotSupportedError):
            flavour.connect(**dict(conn_kwargs, **bad))
    with pytest.raises(TypeError):
        flavour.connect(conn_kwargs["host"])        # keyword-only, as PyMySQL 1.1+


def test_cursorclass_and_kill_and_query(flavour, conn_kwargs):
    c = flavour.connect(cursorclass=flavour.cursors.DictCursor, **conn_kwargs)
    cur = c.cursor()
    cur.execute("SELECT %(a)s AS a", {"a": "x'y"})
    assert cur.fetchall() == [{"a": "x'y"}]
    assert isinstance(c.cursor(flavour.cursors.Cursor), flavour.cursors.Cursor)
    assert c.query("SELECT 1 UNION SELECT 2") == 2
    with pytest.raises(TypeError):
        c.kill("1")
    other = flavour.connect(**conn_kwargs)
    c.kill(other.thread_id())
    with pytest.raises(flavour.err.OperationalError):
        other.cursor().execute("SELECT 1")
    c.close()


def test_callproc_like_pymysql(both):
    (flav, real), conns = both
    got = []
    for i, c in enumerate(conns):
        cur = c.cursor()
        cur.execute("DROP PROCEDURE IF EXISTS flav_p%d" % i)
        cur.execute("CREATE PROCEDURE flav_p%d(IN a INT, OUT b INT) BEGIN "
                    "SELECT a + 1; SET b = a * 2; END" % i)
        assert cur.callproc("flav_p%d" % i, (20, 0)) == (20, 0)
        rows = cur.fetchall()
        while cur.nextset():
            pass
        cur.execute("SELECT @`_flav_p%d_1`" % i)
        got.append((rows, cur.fetchall()))
        cur.execute("DROP PROCEDURE flav_p%d" % i)
    assert got[0] == got[1] == (((21,),), ((40,),))


def test_charset_and_optionfile_modules(both, tmp_path):
    (flav, real), (a, b) = both
    import io
    fc, fo = sys.modules["pymysql.charset"], sys.modules["pymysql.optionfile"]
    for name in ("utf8mb4", "utf8mb3", "utf8", "UTF8", "latin1", "binary", "gbk",
                 "ascii", "koi8r", "sjis"):
        x, y = fc.charset_by_name(name), real.charset.charset_by_name(name)
        assert (repr(x), x.encoding, x.is_binary) == (repr(y), y.encoding, y.is_binary)
    assert repr(fc.charset_by_id(45)) == repr(real.charset.charset_by_id(45))
    with pytest.raises(KeyError):
        fc.charset_by_name("nope")
    text = "[client]\nuser = 'u1'\nskip-ssl\nsingle_quoted = \"v\"\n"
    for parser in (fo.Parser(), real.optionfile.Parser()):
        parser.read_file(io.StringIO(text))
        assert parser.get("client", "user") == "u1"
        assert parser.get("client", "single-quoted") == "v"


def test_read_default_file(flavour, conn_kwargs, tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser = %s\npassword = \"%s\"\nhost = %s\nport = %d\n"
                   "database = %s\n[other]\nuser = nobody\n"
                   % (conn_kwargs["user"], conn_kwargs["password"], conn_kwargs["host"],
                      conn_kwargs["port"], conn_kwargs["database"]))
    c = flavour.connect(read_default_file=str(cnf))
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER(), DATABASE()")
    user, db = cur.fetchone()
    assert user.startswith(conn_kwargs["user"] + "@") and db == conn_kwargs["database"]
    c.close()
    with pytest.raises(flavour.err.OperationalError):      # [other] has a wrong user
        flavour.connect(read_default_file=str(cnf), read_default_group="other",
                        password="x", host=conn_kwargs["host"], port=conn_kwargs["port"])


def test_load_data_local_file_named_by_the_statement(flavour, conn_kwargs, tmp_path):
    data = tmp_path / "rows.txt"
    data.write_text("1,a\n2,b\n")
    other = tmp_path / "secret.txt"
    other.write_text("9,z\n")
    c = flavour.connect(local_infile=True, **conn_kwargs)
    cur = c.cursor()
    cur.execute("CREATE TEMPORARY TABLE li (i INT, s VARCHAR(5))")
    path = str(data).replace("\\", "\\\\").replace("'", "\\'")
    cur.execute("LOAD DATA LOCAL INFILE '%s' INTO TABLE li FIELDS TERMINATED BY ','" % path)
    cur.execute("SELECT * FROM li ORDER BY i")
    assert cur.fetchall() == ((1, "a"), (2, "b"))
    with pytest.raises(flavour.err.OperationalError):
        cur.execute("LOAD DATA LOCAL INFILE '%s' INTO TABLE li" % (str(tmp_path / "none.txt"),))
    cur.execute("SELECT 1")          # the connection is still in sync
    assert cur.fetchall() == ((1,),)
    c.close()
    off = flavour.connect(**conn_kwargs)
    with pytest.raises(flavour.err.DatabaseError):
        off.cursor().execute("LOAD DATA LOCAL INFILE '%s' INTO TABLE li" % path)
    off.close()


def test_parameters_struct_time_and_sets(both):
    import time
    (flav, real), conns = both
    got = []
    st = time.struct_time((2021, 3, 4, 5, 6, 7, 0, 0, -1))
    for c in conns:
        cur = c.cursor()
        cur.execute("SELECT %s", (st,))
        one = cur.fetchall()
        rows = []
        for seq in ((2, 6), [2, 6], {2, 6}, frozenset(["a", "b"])):
            cur.execute("SELECT 2 IN %s, 'a' IN %s", (seq, seq))
            rows.append(cur.fetchall())
        cur.execute("CREATE TEMPORARY TABLE pt (d DATETIME)")
        cur.executemany("INSERT INTO pt VALUES (%s)", [(st,), (st,)])
        cur.execute("SELECT d FROM pt")
        got.append((one, rows, cur.fetchall()))
    assert got[0] == got[1]
    assert got[0][2] == ((datetime.datetime(2021, 3, 4, 5, 6, 7),),) * 2


def test_executed_types_like_pymysql(both):
    (flav, real), conns = both
    got = []
    for c in conns:
        cur = c.cursor()
        cur.execute("SELECT %s", ("x",))
        first = cur._executed
        cur.execute(b"SELECT 1")
        second = cur._executed
        cur.execute("CREATE TEMPORARY TABLE ex (i INT)")
        cur.executemany("INSERT INTO ex VALUES (%s)", [(1,), (2,)])
        got.append((first, second, bytes(cur._executed), cur.rowcount))
    assert got[0] == got[1]
    assert got[0][2] == b"INSERT INTO ex VALUES (1),(2)"


def test_raise_mysql_exception(flavour):
    err = flavour.err
    with pytest.raises(err.ProgrammingError) as e:
        err.raise_mysql_exception(b"\xff\x7a\x04#42S02Table 'x' doesn't exist")
    assert e.value.args == (1146, "Table 'x' doesn't exist")
    assert e.value.sqlstate == "42S02"
    with pytest.raises(err.InterfaceError):
        err.raise_mysql_exception(b"\xff")


def test_ping_default_and_sqlalchemy_signature(flavour):
    import inspect
    sig = inspect.signature(flavour.connections.Connection.ping)
    assert list(sig.parameters)[1] == "reconnect"
    assert sig.parameters["reconnect"].default is False


def test_values_bytes_parameters_lastrowid_like_pymysql(both):
    (flav, real), conns = both
    got = []
    for c in conns:
        cur = c.cursor()
        cur.execute("SELECT %s, %s, CAST('2020-01-01 00:00:00' AS DATETIME), b'101', "
                    "JSON_OBJECT('a', 1), CAST(1.5 AS DECIMAL(5,2)), "
                    "CAST('-1:00:00' AS TIME), 1e0, _binary 'ab', 'é'",
                    (b"\xff\x00'", "x"))
        rows = cur.fetchall()
        select_ids = (cur.lastrowid, cur.rowcount)
        cur.execute("CREATE TEMPORARY TABLE li2 (i INT AUTO_INCREMENT PRIMARY KEY, b BLOB)")
        cur.execute("INSERT INTO li2 (b) VALUES (%s)", (b"\x80\x81",))
        insert_ids = (cur.lastrowid, cur.rowcount)
        cur.execute("SELECT b FROM li2")
        got.append((rows, select_ids, insert_ids, cur.fetchall()))
    assert got[0] == got[1]
    assert got[0][0][0][0] == b"\xff\x00'" and got[0][1] == (None, 1)


def test_sqlalchemy_pymysql_dialect_runs_on_the_flavour(flavour, conn_kwargs):
    sa = pytest.importorskip("sqlalchemy")
    url = sa.engine.URL.create("mysql+pymysql", username=conn_kwargs["user"],
                               password=conn_kwargs["password"], host=conn_kwargs["host"],
                               port=conn_kwargs["port"], database=conn_kwargs["database"])
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            assert isinstance(conn.connection.dbapi_connection, flavour.connections.Connection)
            assert conn.execute(sa.text("SELECT 1, :x"), {"x": "a'b"}).all() == [(1, "a'b")]
            result = conn.execution_options(stream_results=True).execute(
                sa.text("SELECT 1 UNION SELECT 2"))
            assert isinstance(result.cursor, flavour.cursors.SSCursor)
            assert result.all() == [(1,), (2,)]
    finally:
        engine.dispose()


def test_conv_with_a_function_of_ones_own_gives_pymysql_zero_dates(flavour, conn_kwargs):
    from pymysql.constants import FIELD_TYPE
    from pymysql.converters import conversions, convert_date
    conv = dict(conversions)
    conv[FIELD_TYPE.DATE] = lambda s: convert_date(s)
    c = flavour.connect(conv=conv, **conn_kwargs)
    cur = c.cursor()
    cur.execute("SELECT CAST('0000-00-00' AS DATE), CAST('2020-01-02' AS DATE), 1")
    assert cur.fetchall() == (("0000-00-00", datetime.date(2020, 1, 2), 1),)
    c.close()
    d = flavour.connect(conv=dict(conversions), **conn_kwargs)     # the defaults
    cur = d.cursor()
    cur.execute("SELECT CAST('0000-00-00' AS DATE), 1.5")
    assert cur.fetchall() == ((None, Decimal("1.5")),)
    d.close()


def test_bytes_parameters_hex_and_mogrify_like_pymysql(both):
    (flav, real), conns = both
    got = []
    params = (b"\x01\xff'", bytearray(b"\x00"), "a'b", 1, 1.5, None, (b"x", 2),
              datetime.date(2020, 1, 2), Decimal("1.10"))
    for c in conns:
        cur = c.cursor()
        text = cur.mogrify("SELECT %s, %s, %s, %s, %s, %s, %s IN %s, %s, %s",
                           params[:6] + (2,) + params[6:])
        cur.execute("SELECT _binary %s, %s", (b"\x01\xff", b"\x80"))
        rows = cur.fetchall()
        cur.execute("CREATE TEMPORARY TABLE hb (b VARBINARY(10))")
        cur.executemany("INSERT INTO hb VALUES (%s)", [(b"\xfe",), (b"_binary",)])
        cur.execute("SELECT b FROM hb")
        got.append((text, rows, cur.fetchall()))
    # the same text: str escaped for the (certain) sql_mode as PyMySQL writes it
    assert "'a\\'b'" in got[0][0] and "'a\\'b'" in got[1][0]
    assert got[0] == got[1]
    assert got[0][1] == ((b"\x01\xff", b"\x80"),)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """A private server with TLS (the CA of tests/_certs.py), started for this module."""
    if os.environ.get("MYSQLC_TEST_DSN"):
        pytest.skip("MYSQLC_TEST_DSN is set: no private TLS server")
    try:
        certs = make_certs(tmp_path_factory.mktemp("flavour-certs"))
    except CertsUnavailable as exc:
        pytest.skip("cannot make test certificates: %s" % exc)
    try:
        srv = PrivateServer(extra_args=certs.server_args()).start()
    except ServerNotAvailable as exc:
        pytest.skip("no private server with TLS: %s" % exc)
    try:
        yield srv, certs
    finally:
        srv.stop()


def _ssl_version(conn):
    cur = conn.cursor()
    cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
    return cur.fetchall()[0][1]


@pytest.mark.server
@pytest.mark.allow_skip
def test_tls_options_like_pymysql(flavour, tls_server):
    srv, certs = tls_server
    kw = srv.connect_kwargs()
    got = []
    real = _real_pymysql()
    for mod in (flavour, real):
        default = mod.connect(**kw)                         # PREFERRED: TLS when offered
        off = mod.connect(ssl_disabled=True, **kw)
        verified = mod.connect(ssl={"ca": certs.ca_cert}, **kw)
        verified_kw = mod.connect(ssl_ca=certs.ca_cert, ssl_verify_identity=True, **kw)
        got.append(tuple(bool(_ssl_version(c)) for c in (default, off, verified, verified_kw)))
        for c in (default, off, verified, verified_kw):
            c.close()
    assert got[0] == got[1] == (True, False, True, True)


def _real_pymysql():
    saved = _pymysql_modules()
    for k in saved:
        del sys.modules[k]
    try:
        return importlib.import_module("pymysql")
    finally:
        for k in list(_pymysql_modules()):
            del sys.modules[k]
        sys.modules.update(saved)


def test_sscursor_nextset_like_pymysql(both, conn_kwargs):
    (flav, real), _ = both
    got = []
    for mod in (flav, real):
        c = mod.connect(client_flag=mod.constants.CLIENT.MULTI_STATEMENTS, **conn_kwargs)
        cur = c.cursor(mod.cursors.SSCursor)
        cur.execute("SELECT 1 UNION SELECT 2; SELECT 3")
        seq = [cur.fetchone(), cur.nextset(), cur.fetchall(), cur.nextset(), cur.fetchall(),
               cur.nextset()]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cur.execute("SELECT 1 UNION SELECT 2; SELECT 3")
            cur.fetchone()
            cur.execute("SELECT 7")          # the same cursor: warns, as PyMySQL
            seq.append((cur.fetchall(), [str(x.message) for x in w
                                         if x.category is UserWarning]))
        got.append(seq)
        c.close()
    assert got[0] == got[1]
    assert got[0][:6] == [(1,), None, [(2,)], True, [(3,)], None]


@pytest.mark.parametrize("host", ["localhost", None])
def test_localhost_is_tcp_as_pymysql(flavour, real_pymysql, conn_kwargs, monkeypatch, host):
    """PyMySQL connects to ``localhost`` (or no host) over TCP on `port`; only
    ``unix_socket`` makes it use a socket.  The flavour must not take mysqlclient's
    rule (the local socket): PyMySQL code would reach another server, or none."""
    monkeypatch.setenv("MYSQL_UNIX_PORT", "/nonexistent-dir/mysqld.sock")
    kw = {k: v for k, v in conn_kwargs.items() if k not in ("host", "unix_socket")}
    if host is not None:
        kw["host"] = host
    infos = []
    for mod in (flavour, real_pymysql):
        conn = mod.connect(**kw)
        try:
            cur = conn.cursor()
            cur.execute("SELECT 1")
            infos.append((cur.fetchone(), conn.get_host_info(), conn.host))
        finally:
            conn.close()
    assert infos[0] == infos[1]
    assert infos[0][1] == "socket localhost:%d" % conn_kwargs["port"]


def test_conv_decoders_get_text_like_pymysql(both, conn_kwargs):
    """A ``conv`` decoder of a number column gets the ASCII text, as PyMySQL's (the mysqlc
    API hands over mysqlclient's bytes); DECIMAL, dates, times: the text too."""
    (flavour, real), _ = both
    exprs = [("CAST(7 AS INT)", 3), ("CAST(-12345678901 AS SIGNED)", 8), ("1.5e0", 5),
             ("CAST(1.25 AS DECIMAL(5,2))", 246),
             ("DATE'2024-01-02'", 10), ("TIME'-01:02:03.5'", 11),
             ("TIMESTAMP'2024-01-02 03:04:05'", 12)]
    rows = []
    for mod in (flavour, real):
        conv = dict(mod.converters.conversions)
        for _e, code in exprs:
            conv[code] = lambda v, _c=code: (_c, type(v).__name__, v)
        c = mod.connect(conv=conv, **conn_kwargs)
        try:
            cur = c.cursor()
            cur.execute("SELECT " + ", ".join(e for e, _ in exprs))
            rows.append(cur.fetchone())
            c.decoders[3] = int           # the fast converters keep their meaning
        finally:
            c.close()
    assert rows[0] == rows[1]
    assert {r[1] for r in rows[0]} == {"str"}
    c = flavour.connect(conv={3: int, 5: float, 8: str}, **conn_kwargs)
    try:
        cur = c.cursor()
        cur.execute("SELECT CAST(7 AS INT), 1.5e0, CAST(-12345678901 AS SIGNED)")
        assert cur.fetchone() == (7, 1.5, "-12345678901")
    finally:
        c.close()


def _sock_for(kw, unix):
    import socket
    if unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(kw["unix_socket"])
        return s
    return socket.create_connection((kw["host"], kw["port"]))


@pytest.mark.parametrize("unix", [False, True], ids=["tcp", "unix"])
def test_connect_over_a_socket_of_ones_own(flavour, server, unix):
    """PyMySQL's connect(sock): the session runs over the caller's socket (the core's
    Python transport), with compression too; close() closes the socket."""
    kw = server.connect_kwargs(unix=unix)
    for k in ("host", "port", "unix_socket"):
        kw.pop(k, None)
    for compress in (False, True):
        sock = _sock_for(server.connect_kwargs(unix=unix), unix)
        c = flavour.connect(defer_connect=True, compress=compress, **kw)
        assert not c.open
        c.connect(sock)
        assert c.open and c.fileno() == sock.fileno()
        cur = c.cursor()
        cur.execute("SELECT %s, REPEAT('x', 300000), CONNECTION_ID()", ("é",))
        value, big, thread_id = cur.fetchone()
        assert value == "é" and len(big) == 300000 and thread_id == c.thread_id()
        ss = c.cursor(flavour.cursors.SSCursor)
        ss.execute("SELECT seq FROM seq_1_to_50000")
        assert sum(r[0] for r in ss) == 50000 * 50001 // 2
        cur.execute("SHOW SESSION STATUS LIKE 'Compression'")
        assert cur.fetchone()[1] == ("ON" if compress else "OFF")
        c.close()
        assert sock.fileno() == -1 and not c.open
    # a connection made with sock reconnects to host/port on its own
    sock = _sock_for(server.connect_kwargs(unix=unix), unix)
    c = flavour.connect(defer_connect=True, **server.connect_kwargs(unix=unix))
    c.connect(sock)
    c.connect()
    assert c.open and c.fileno() != sock.fileno() and sock.fileno() == -1
    c.close()
    with pytest.raises(TypeError):
        flavour.connect(defer_connect=True, **kw).connect("not a socket")


def test_connect_over_a_socket_lost_and_timed_out(flavour, server):
    kw = server.connect_kwargs()
    sock = _sock_for(kw, False)
    c = flavour.connect(defer_connect=True, read_timeout=1, **kw)
    c.connect(sock)
    with pytest.raises(flavour.err.OperationalError) as ei:
        c.cursor().execute("SELECT SLEEP(5)")
    assert ei.value.args[0] == 2013
    assert not c.open
    sock = _sock_for(kw, False)
    c = flavour.connect(defer_connect=True, **kw)
    c.connect(sock)
    sock.shutdown(2)                       # the stream ends under the session
    with pytest.raises(flavour.err.OperationalError) as ei:
        c.cursor().execute("SELECT 1")
    assert ei.value.args[0] in (2006, 2013)
    with pytest.raises(ValueError, match="closed"):
        flavour.connect(defer_connect=True, **kw).connect(sock)   # closed by the failure
    # a peer that ends the stream before its handshake: 2013 at once
    import socket
    import time
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        sock = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        accepted.close()
        start = time.monotonic()
        with pytest.raises(flavour.err.OperationalError) as ei:
            flavour.connect(defer_connect=True, **kw).connect(sock)
        assert ei.value.args[0] == 2013 and time.monotonic() - start < 5


@pytest.mark.server
@pytest.mark.allow_skip
def test_connect_over_a_socket_with_tls(flavour, tls_server):
    srv, certs = tls_server
    kw = srv.connect_kwargs()
    sock = _sock_for(kw, False)
    c = flavour.connect(defer_connect=True, ssl_ca=certs.ca_cert, ssl_verify_identity=True,
                        **kw)
    c.connect(sock)
    try:
        assert _ssl_version(c)
        cur = c.cursor()
        cur.execute("SELECT REPEAT('t', 100000)")
        assert cur.fetchone()[0] == "t" * 100000
    finally:
        c.close()


def test_error_sqlstate_keyword(flavour):
    """PyMySQL's Error(..., sqlstate=...); without it mysqlc's class default HY000 stays
    (PyMySQL: None; docs/compat.md)."""
    e = flavour.err.Error(1234, "boom", sqlstate="42000")
    assert e.args == (1234, "boom") and e.sqlstate == "42000"
    assert flavour.err.OperationalError(1, "x").sqlstate == "HY000"
    assert mysqlc.ProgrammingError(1, "x", sqlstate="42S02").sqlstate == "42S02"
