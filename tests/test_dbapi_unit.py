"""Unit tests of the Python DB-API layer that need no server.

Covers the exception hierarchy and errno mapping, the constants modules, the
PEP 249 type objects and constructors, the executemany INSERT rewrite, the
charset tables, the converters registry, the temporal helpers, and the cursor
logic driven by a scripted stand-in for ``mysqlc._core.Connection``.
"""

import ast
import codecs
import datetime
import decimal
import importlib
import os
import subprocess
import sys

import threading

import pytest

import mysqlc
from mysqlc import _charsets, converters, cursors, errors, times
from mysqlc.constants import CLIENT, COMMAND, CR, ER, FIELD_TYPE, FLAG, SERVER_STATUS


# ---------------------------------------------------------------- module globals

def test_module_globals():
    assert mysqlc.apilevel == "2.0"
    assert mysqlc.threadsafety == 1
    assert mysqlc.paramstyle == "format"
    assert mysqlc.__version__ == "0.1.0"
    assert mysqlc.version_info[:3] == (0, 1, 0)
    assert mysqlc.get_client_info() == "0.1.0"
    assert mysqlc.connect is mysqlc.Connection
    assert mysqlc.Connect is mysqlc.Connection


_BLOCK_CORE = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "mysqlc._core":
            raise ImportError("blocked for the test")
sys.meta_path.insert(0, Block())
"""


def test_package_imports_without_the_core():
    # mysqlc.server and the pure-Python modules must work before the extension is
    # built; connect() then names the problem
    code = _BLOCK_CORE + """
import mysqlc.server, mysqlc
assert mysqlc._core is None
assert mysqlc.errors._error_class(1062) is mysqlc.IntegrityError
try:
    mysqlc.connect(host="127.0.0.1")
except ImportError as e:
    assert "not built" in str(e), e
else:
    raise AssertionError("connect() without the core did not raise")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(mysqlc.__file__)))
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------- exceptions

ALL_ERRORS = ["Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
              "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
              "NotSupportedError"]


def test_exception_hierarchy():
    assert issubclass(mysqlc.Warning, Exception)
    assert issubclass(mysqlc.Error, Exception)
    assert not issubclass(mysqlc.Warning, mysqlc.Error)
    assert issubclass(mysqlc.InterfaceError, mysqlc.Error)
    assert issubclass(mysqlc.DatabaseError, mysqlc.Error)
    for name in ("DataError", "OperationalError", "IntegrityError", "InternalError",
                 "ProgrammingError", "NotSupportedError"):
        assert issubclass(getattr(mysqlc, name), mysqlc.DatabaseError), name
    assert issubclass(mysqlc.Warning, mysqlc.MySQLError)
    assert issubclass(mysqlc.Error, mysqlc.MySQLError)


def test_exceptions_reexported_and_on_connection():
    for name in ALL_ERRORS:
        cls = getattr(errors, name)
        assert getattr(mysqlc, name) is cls
        assert getattr(mysqlc.Connection, name) is cls


def test_exception_args():
    e = mysqlc.IntegrityError(1062, "Duplicate entry")
    assert e.args == (1062, "Duplicate entry")


def _imports(module):
    tree = ast.parse(open(module.__file__).read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or "") + ":" +
                      ",".join(a.name for a in node.names))
    return found


def test_errors_module_does_not_import_core():
    # the C core imports mysqlc.errors while it initialises
    assert _imports(errors) == {"builtins", ".constants:CR,ER"}


@pytest.mark.parametrize("errno, cls", [
    (ER.DUP_ENTRY, "IntegrityError"),
    (1451, "IntegrityError"), (1452, "IntegrityError"), (1048, "IntegrityError"),
    (1216, "IntegrityError"), (1217, "IntegrityError"), (1364, "IntegrityError"),
    (1557, "IntegrityError"), (1586, "IntegrityError"), (1761, "IntegrityError"),
    (1762, "IntegrityError"), (1859, "IntegrityError"), (4025, "IntegrityError"),
    (3819, "IntegrityError"),
    (1064, "ProgrammingError"), (1146, "ProgrammingError"), (1054, "OperationalError"),
    (1044, "OperationalError"), (1142, "OperationalError"), (1143, "OperationalError"),
    (1149, "ProgrammingError"), (1110, "ProgrammingError"), (1102, "ProgrammingError"),
    (1103, "ProgrammingError"), (1111, "ProgrammingError"), (1113, "ProgrammingError"),
    (2014, "ProgrammingError"),
    (1264, "DataError"), (1365, "DataError"), (1406, "DataError"), (1366, "DataError"),
    (1292, "DataError"), (1265, "DataError"), (1416, "DataError"),
    (1235, "NotSupportedError"), (1289, "NotSupportedError"), (1286, "NotSupportedError"),
    (1045, "OperationalError"), (1049, "OperationalError"), (2002, "OperationalError"),
    (2003, "OperationalError"), (2006, "OperationalError"), (2013, "OperationalError"),
    (2027, "OperationalError"), (1213, "OperationalError"), (1205, "OperationalError"),
    (1690, "OperationalError"),      # Django converts this one itself
    (28, "InternalError"), (999, "InternalError"),
    (1999, "OperationalError"), (4999, "OperationalError"), (65535, "OperationalError"),
    (0, "InterfaceError"),
])
def test_error_class(errno, cls):
    assert errors._error_class(errno) is getattr(mysqlc, cls)


def test_error_class_is_a_dict_lookup():
    assert isinstance(errors.error_map, dict)
    assert errors.error_map[1062] is mysqlc.IntegrityError
    for cls in errors.error_map.values():
        assert issubclass(cls, mysqlc.Error)


# ---------------------------------------------------------------- constants

def test_field_type_constants():
    assert (FIELD_TYPE.DECIMAL, FIELD_TYPE.TINY, FIELD_TYPE.LONG, FIELD_TYPE.NULL) == (0, 1, 3, 6)
    assert (FIELD_TYPE.TIMESTAMP, FIELD_TYPE.LONGLONG, FIELD_TYPE.DATE, FIELD_TYPE.TIME) == (7, 8, 10, 11)
    assert (FIELD_TYPE.DATETIME, FIELD_TYPE.YEAR, FIELD_TYPE.VARCHAR, FIELD_TYPE.BIT) == (12, 13, 15, 16)
    assert FIELD_TYPE.JSON == 245
    assert FIELD_TYPE.NEWDECIMAL == 246
    assert (FIELD_TYPE.ENUM, FIELD_TYPE.SET, FIELD_TYPE.BLOB) == (247, 248, 252)
    assert (FIELD_TYPE.VAR_STRING, FIELD_TYPE.STRING, FIELD_TYPE.GEOMETRY) == (253, 254, 255)
    assert FIELD_TYPE.CHAR == FIELD_TYPE.TINY and FIELD_TYPE.INTERVAL == FIELD_TYPE.ENUM


def test_client_flag_constants():
    assert CLIENT.LONG_PASSWORD == 1
    assert CLIENT.FOUND_ROWS == 2
    assert CLIENT.CONNECT_WITH_DB == 8
    assert CLIENT.PROTOCOL_41 == 512
    assert CLIENT.SSL == 2048
    assert CLIENT.TRANSACTIONS == 8192
    assert CLIENT.SECURE_CONNECTION == 32768
    assert CLIENT.MULTI_STATEMENTS == 1 << 16
    assert CLIENT.MULTI_RESULTS == 1 << 17
    assert CLIENT.PLUGIN_AUTH == 1 << 19
    assert CLIENT.DEPRECATE_EOF == 1 << 24


def test_flag_server_status_command_constants():
    assert (FLAG.NOT_NULL, FLAG.PRI_KEY, FLAG.UNSIGNED, FLAG.BINARY) == (1, 2, 32, 128)
    assert (FLAG.ENUM, FLAG.AUTO_INCREMENT, FLAG.SET) == (256, 512, 2048)
    assert SERVER_STATUS.SERVER_STATUS_IN_TRANS == 1
    assert SERVER_STATUS.SERVER_STATUS_AUTOCOMMIT == 2
    assert SERVER_STATUS.SERVER_MORE_RESULTS_EXISTS == 8
    assert SERVER_STATUS.SERVER_STATUS_NO_BACKSLASH_ESCAPES == 512
    assert (COMMAND.COM_QUIT, COMMAND.COM_INIT_DB, COMMAND.COM_QUERY, COMMAND.COM_PING) == (1, 2, 3, 14)
    assert COMMAND.COM_STMT_PREPARE == 22 and COMMAND.COM_RESET_CONNECTION == 31


def test_er_constants():
    assert ER.DUP_ENTRY == 1062
    assert ER.PARSE_ERROR == 1064
    assert ER.NO_SUCH_TABLE == 1146
    assert ER.BAD_FIELD_ERROR == 1054
    assert ER.BAD_DB_ERROR == 1049
    assert ER.ACCESS_DENIED_ERROR == 1045
    assert ER.ROW_IS_REFERENCED_2 == 1451
    assert ER.NO_REFERENCED_ROW_2 == 1452
    assert ER.BAD_NULL_ERROR == 1048
    assert ER.WARN_DATA_OUT_OF_RANGE == 1264
    assert ER.WARN_DATA_TRUNCATED == 1265
    assert ER.DATA_TOO_LONG == 1406
    assert ER.LOCK_DEADLOCK == 1213
    assert ER.LOCK_WAIT_TIMEOUT == 1205
    assert ER.CONSTRAINT_FAILED == 4025
    assert ER.CHECK_CONSTRAINT_VIOLATED == 3819
    # every name is an int and no name is listed twice with different numbers
    names = [n for n in dir(ER) if n.isupper()]
    assert len(names) > 500
    assert all(isinstance(getattr(ER, n), int) for n in names)


def test_cr_constants():
    assert CR.CR_UNKNOWN_ERROR == 2000
    assert CR.CR_CONNECTION_ERROR == 2002
    assert CR.CR_CONN_HOST_ERROR == 2003
    assert CR.CR_SERVER_GONE_ERROR == 2006
    assert CR.CR_SERVER_LOST == 2013
    assert CR.CR_COMMANDS_OUT_OF_SYNC == 2014
    assert CR.CR_MALFORMED_PACKET == 2027
    assert CR.CR_AUTH_PLUGIN_ERR == 2061
    values = {getattr(CR, n) for n in dir(CR) if n.startswith("CR_")}
    assert set(range(2000, 2062)) <= values


# ---------------------------------------------------------------- type objects

def test_type_objects_compare_equal_to_field_types():
    assert FIELD_TYPE.VAR_STRING == mysqlc.STRING
    assert mysqlc.STRING == FIELD_TYPE.STRING
    assert FIELD_TYPE.ENUM == mysqlc.STRING
    assert FIELD_TYPE.BLOB == mysqlc.BINARY
    assert FIELD_TYPE.LONG_BLOB == mysqlc.BINARY
    for t in (FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG,
              FIELD_TYPE.INT24, FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE, FIELD_TYPE.DECIMAL,
              FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.YEAR):
        assert t == mysqlc.NUMBER
    assert FIELD_TYPE.DATETIME == mysqlc.DATETIME
    assert FIELD_TYPE.TIMESTAMP == mysqlc.DATETIME
    assert FIELD_TYPE.DATE == mysqlc.DATE
    assert FIELD_TYPE.TIME == mysqlc.TIME
    assert FIELD_TYPE.DATE != mysqlc.STRING
    assert FIELD_TYPE.LONG != mysqlc.STRING
    assert mysqlc.STRING != mysqlc.NUMBER
    assert mysqlc.STRING == mysqlc.STRING
    assert FIELD_TYPE.LONG != mysqlc.ROWID
    assert len({mysqlc.STRING, mysqlc.NUMBER}) == 2     # hashable


def test_constructors():
    assert mysqlc.Date(2024, 1, 2) == datetime.date(2024, 1, 2)
    assert mysqlc.Time(3, 4, 5) == datetime.time(3, 4, 5)
    assert mysqlc.Timestamp(2024, 1, 2, 3, 4, 5) == datetime.datetime(2024, 1, 2, 3, 4, 5)
    ticks = 1700000000.5
    assert mysqlc.DateFromTicks(ticks) == datetime.datetime.fromtimestamp(ticks).date()
    assert mysqlc.TimestampFromTicks(ticks) == datetime.datetime.fromtimestamp(ticks).replace(microsecond=0)
    assert mysqlc.TimeFromTicks(ticks) == datetime.datetime.fromtimestamp(ticks).time().replace(microsecond=0)
    b = mysqlc.Binary(bytearray(b"\x00\xff"))
    assert b == b"\x00\xff" and type(b) is bytes
    assert mysqlc.Binary([1, 2]) == b"\x01\x02"


# ---------------------------------------------------------------- times helpers

def test_temporal_parsers():
    assert times.Date_or_None("2024-02-29") == datetime.date(2024, 2, 29)
    assert times.Date_or_None("0000-00-00") is None
    assert times.DateTime_or_None("2024-01-02 03:04:05") == datetime.datetime(2024, 1, 2, 3, 4, 5)
    assert times.DateTime_or_None(b"2024-01-02 03:04:05.25") == datetime.datetime(2024, 1, 2, 3, 4, 5, 250000)
    assert times.DateTime_or_None("2024-01-02T03:04:05.123456") == datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)
    assert times.DateTime_or_None("2024-01-02") == datetime.date(2024, 1, 2)
    assert times.DateTime_or_None("0000-00-00 00:00:00") is None
    assert times.TimeDelta_or_None("838:59:59") == datetime.timedelta(hours=838, minutes=59, seconds=59)
    assert times.TimeDelta_or_None("-00:30:00.5") == -datetime.timedelta(minutes=30, microseconds=500000)
    assert times.TimeDelta_or_None("junk") is None
    assert times.Time_or_None("23:59:59.000001") == datetime.time(23, 59, 59, 1)
    assert times.Time_or_None("25:00:00") is None


def test_temporal_literals():
    assert times.DateTime2literal(datetime.datetime(2024, 1, 2, 3, 4, 5), None) == b"'2024-01-02 03:04:05'"
    assert times.DateTime2literal(datetime.datetime(1, 1, 1, 0, 0, 0, 7), None) == b"'0001-01-01 00:00:00.000007'"
    # mysqlclient 2.3's 'D H:M:S' text
    assert times.DateTimeDelta2literal(datetime.timedelta(hours=-1), None) == b"'-0 1:0:0'"
    assert times.DateTimeDelta2literal(datetime.timedelta(days=2, seconds=1, microseconds=5), None) == b"'2 0:0:1.000005'"
    assert times.format_TIMEDELTA(-datetime.timedelta(days=1, minutes=1)) == "-1 0:1:0"
    assert times.Date2literal(datetime.date(2024, 1, 2), None) == b"'2024-01-02'"
    assert times.Time2literal(datetime.time(1, 2, 3, 4), None) == b"'01:02:03.000004'"


# ---------------------------------------------------------------- executemany regex

def _split(query):
    m = cursors.RE_INSERT_VALUES.match(query)      # a str pattern, as mysqlclient's
    mb = cursors._RE_INSERT_VALUES_BYTES.match(query.encode())   # what executemany uses
    assert (m is None) == (mb is None)
    if m is None:
        return None
    assert tuple(mb.group(g).decode() for g in ("prefix", "values", "postfix")) == m.groups()
    return tuple(m.group(g) for g in ("prefix", "values", "postfix"))


@pytest.mark.parametrize("query, expected", [
    ("INSERT INTO t (a, b) VALUES (%s, %s)",
     ("INSERT INTO t (a, b) VALUES ", "(%s, %s)", "")),
    ("insert into t (a,b) values(%s,%s)",
     ("insert into t (a,b) values", "(%s,%s)", "")),
    ("INSERT INTO `order` (`value`, `values`) VALUE (%s, %s)",
     ("INSERT INTO `order` (`value`, `values`) VALUE ", "(%s, %s)", "")),
    ("  REPLACE INTO t VALUES (%(a)s, %(b)s);  ",
     ("REPLACE INTO t VALUES ", "(%(a)s, %(b)s)", "")),
    ("INSERT INTO t (a, b) VALUES (%s, %s) ON DUPLICATE KEY UPDATE b = VALUES(b)",
     ("INSERT INTO t (a, b) VALUES ", "(%s, %s)", " ON DUPLICATE KEY UPDATE b = VALUES(b)")),
    ("insert ignore into t (a) values (%s)\n on duplicate key update a = a + 1",
     ("insert ignore into t (a) values ", "(%s)", "\n on duplicate key update a = a + 1")),
    ("INSERT INTO t (a, b) VALUES (%s, %s) AS new ON DUPLICATE KEY UPDATE b = new.b",
     ("INSERT INTO t (a, b) VALUES ", "(%s, %s)", " AS new ON DUPLICATE KEY UPDATE b = new.b")),
    ("INSERT INTO t (a, b, c, d) VALUES (%s, NOW(), NULL, 1)",
     ("INSERT INTO t (a, b, c, d) VALUES ", "(%s, NOW(), NULL, 1)", "")),
    ("INSERT INTO value (a) VALUES (%s)",
     ("INSERT INTO value (a) VALUES ", "(%s)", "")),
])
def test_insert_values_regex_matches(query, expected):
    assert _split(query) == expected


@pytest.mark.parametrize("query", [
    "UPDATE t SET a = %s WHERE b = %s",
    "SELECT * FROM t WHERE a IN (%s, %s)",
    "DELETE FROM t WHERE a = %s",
    "INSERT INTO t (a) SELECT a FROM u WHERE b = %s",
    "INSERT INTO t SET a = %s",
    "INSERT INTO t VALUES (%s), (%s)",
    "INSERT INTO t VALUES (%s, 'text')",
    "/* comment */ INSERT INTO t VALUES (%s)",
])
def test_insert_values_regex_rejects(query):
    assert _split(query) is None


def test_placeholder_outside_values_prevents_rewrite():
    assert cursors._has_placeholder(b"ON DUPLICATE KEY UPDATE a = %s")
    assert not cursors._has_placeholder(b"ON DUPLICATE KEY UPDATE a = '100%%'")


# ---------------------------------------------------------------- charsets

def _tsv_rows():
    try:
        with open("/tmp/collations.tsv") as f:
            return [(int(a), b) for a, b in (line.split() for line in f if line.strip())]
    except OSError:
        return None


NO_CODEC = {"armscii8", "dec8", "hp8", "keybcs2", "swe7", "geostd8"}


def test_collation_codecs_cover_mariadb_table():
    rows = _tsv_rows()
    if rows is None:
        rows = [(cid, cs) for cid, cs in _charsets.COLLATION_CHARSETS.items() if cid < 2048]
    for cid, charset in rows:
        assert _charsets.COLLATION_CHARSETS[cid] == charset
        if charset in NO_CODEC:
            assert cid not in _charsets.COLLATION_CODECS
        elif charset == "binary":
            assert _charsets.COLLATION_CODECS[cid] is None
        else:
            codecs.lookup(_charsets.COLLATION_CODECS[cid])


def test_collation_codecs_values():
    cc = _charsets.COLLATION_CODECS
    assert cc[63] is None
    assert cc[45] == cc[46] == cc[224] == cc[33] == cc[83] == "utf-8"
    assert cc[8] == cc[47] == "latin1"
    assert cc[11] == "ascii"
    assert cc[28] == "gbk" and cc[13] == "shift_jis" and cc[95] == "cp932" and cc[1] == "big5"
    assert cc[12] == "euc_jp" and cc[19] == "euc_kr" and cc[7] == "koi8_r"
    assert cc[54] == "utf-16-be" and cc[56] == "utf-16-le" and cc[60] == "utf-32-be"
    assert cc[35] == "utf-16-be"
    for cid in range(255, 324):                 # MySQL 8 utf8mb4_*_0900_*
        assert cc[cid] == "utf-8"
    for cid in (2048, 2303, 2304, 2559):        # MariaDB UCA-14 utf8mb3 / utf8mb4
        assert cc[cid] == "utf-8"
    assert all(isinstance(k, int) for k in cc)
    for codec in set(cc.values()) - {None}:
        codecs.lookup(codec)


def test_charsets_and_collations_options():
    cs = _charsets.CHARSETS
    assert cs["utf8mb4"] == (45, "utf-8")
    assert cs["utf8"][0] == cs["utf8mb3"][0] == 33
    assert cs["latin1"][0] == 8
    assert cs["ascii"][0] == 11
    assert cs["binary"][0] == 63
    assert cs["gbk"][0] == 28 and cs["sjis"][0] == 13 and cs["cp932"][0] == 95 and cs["big5"][0] == 1
    for name, (cid, codec) in cs.items():
        codecs.lookup(codec)
        assert _charsets.COLLATION_CHARSETS[cid] in (name, "utf8mb3")
    for name in ("ucs2", "utf16", "utf16le", "utf32"):
        assert name not in cs                   # not usable as client charsets
    co = _charsets.COLLATIONS
    assert co["utf8mb4_general_ci"] == 45
    assert co["utf8mb4_bin"] == 46
    assert co["utf8mb4_unicode_ci"] == 224
    assert co["utf8mb4_unicode_520_ci"] == 246
    assert co["utf8mb3_general_ci"] == co["utf8_general_ci"] == 33
    assert co["latin1_swedish_ci"] == 8
    assert co["latin1_bin"] == 47
    assert co["utf8mb4_0900_ai_ci"] == 255
    assert co["binary"] == 63


def test_charset_of_collation():
    f = _charsets.charset_of_collation
    assert f("utf8mb4_unicode_ci") == "utf8mb4"
    assert f("utf8_bin") == "utf8mb3"
    assert f("utf8mb4_uca1400_ai_ci") == "utf8mb4"
    assert f("latin1_german2_ci") == "latin1"
    assert f("nosuch_ci") is None


def test_charsets_module_is_pure_data():
    # read by the C core at initialisation: must not import anything
    assert _imports(_charsets) == set()


# ---------------------------------------------------------------- converters

def test_conversions_registry():
    conv = converters.conversions
    assert conv[FIELD_TYPE.LONG] is int
    assert conv[FIELD_TYPE.NEWDECIMAL] is decimal.Decimal
    assert conv[FIELD_TYPE.DATETIME] is times.DateTime_or_None
    assert conv[FIELD_TYPE.TIME] is times.TimeDelta_or_None
    assert conv[FIELD_TYPE.JSON] is str
    assert conv[int](5, conv) == "5"
    assert conv[float](1.5, conv) == "1.5e0"
    assert conv[type(None)](None, conv) == b"NULL"
    assert conv[bool](True, conv) == b"1"
    assert conv[decimal.Decimal](decimal.Decimal("1.10"), conv) == "1.10"
    assert conv[datetime.datetime](datetime.datetime(2024, 1, 2), conv) == b"'2024-01-02 00:00:00'"
    with pytest.raises(mysqlc.ProgrammingError):
        conv[float](float("nan"), conv)


def test_split_conv_defaults_give_no_overrides():
    decoders, encoders, core_encoders = converters._split_conv(dict(converters.conversions))
    assert decoders is None and core_encoders is None
    assert encoders[int] is converters.Thing2Str


def test_split_conv_overrides():
    class Point:
        def __init__(self, x):
            self.x = x

    def time_decoder(s):
        return "T" + s

    conv = dict(converters.conversions)
    conv[FIELD_TYPE.TIME] = time_decoder
    conv[FIELD_TYPE.LONG] = None
    conv[FIELD_TYPE.BLOB] = ((FLAG.BINARY, bytes), (None, str))        # equal to default
    conv[FIELD_TYPE.STRING] = ((FLAG.BINARY, lambda b: b[::-1]), (None, str.upper))
    conv[Point] = lambda o, d: "POINT(%d)" % o.x
    decoders, encoders, core_encoders = converters._split_conv(conv)
    assert set(decoders) == {FIELD_TYPE.TIME, FIELD_TYPE.LONG, FIELD_TYPE.STRING}
    assert decoders[FIELD_TYPE.TIME] is time_decoder
    assert decoders[FIELD_TYPE.LONG]("5") == "5"
    assert decoders[FIELD_TYPE.STRING]("ab") == "AB"
    assert decoders[FIELD_TYPE.STRING](b"ab") == b"ba"
    assert set(core_encoders) == {Point}
    assert core_encoders[Point](Point(3)) == "POINT(3)"
    assert encoders[Point] is conv[Point]


def test_escape_dispatch_uses_mapping():
    mapping = {int: lambda o, d: "INT%d" % o}
    assert converters.escape(7, mapping) == "INT7"
    assert converters.escape(7) == "7"                      # Thing2Str, as MySQLdb
    assert converters.escape(None) == b"NULL"


# ---------------------------------------------------------------- cursors on a scripted core

class FakeCoreModule:
    """Stands in for mysqlc._core: format_query with Python's % on repr-ish literals."""

    @staticmethod
    def _lit(v):
        if v is None:
            return b"NULL"
        if isinstance(v, (int, float)):
            return str(v).encode()
        if isinstance(v, bytes):
            return b"'" + v.replace(b"'", b"\\'") + b"'"
        return ("'%s'" % str(v).replace("'", "\\'")).encode()

    def format_query(self, query, args, **kw):
        if isinstance(args, dict):
            return query % {k.encode(): self._lit(v) for k, v in args.items()}
        if query.replace(b"%%", b"").count(b"%s") != len(args):
            raise mysqlc.ProgrammingError(0, "placeholders/parameters differ")
        return query % tuple(self._lit(v) for v in args)

    def literal(self, obj, **kw):
        return self._lit(obj)


class FakeCore:
    """A scripted _core.Connection: each query pops the next list of results.

    A result is ("rows", names, rows) or ("ok", affected, insert_id).
    """

    no_backslash_escapes = False
    open = True
    cursor_open = False
    bulk_operations = False   # MySQL-like: executemany takes the multi-row text path

    def __init__(self):
        self.sent = []
        self.script = []
        self._pending = []
        self._cur = None
        self.rows_pending = False

    @property
    def more_results(self):
        return bool(self._pending)

    @property
    def unread(self):   # as the core's: rows_pending or more_results or cursor_open
        return self.rows_pending or self.more_results or self.cursor_open

    def _load(self, result):
        self._cur = result
        if result[0] == "rows":
            _, names, rows = result
            self.field_count = len(names)
            self.description = tuple((n, 253, None, 1, 1, 0, True) for n in names)
            self.description_flags = tuple(0 for _ in names)
            self.column_names = tuple(n.split(".")[-1] for n in names)
            self.column_tables = tuple(n.split(".")[0] if "." in n else "" for n in names)
            self.rows_pending = True
            self.affected_rows = 0
        else:
            _, self.affected_rows, self.insert_id = result
            self.field_count = 0
            self.description = self.description_flags = None
            self.rows_pending = False
        self.warning_count = 0
        return self.field_count

    def query(self, sql):
        assert not self.rows_pending and not self._pending, "commands out of sync"
        self.sent.append(sql)
        results = self.script.pop(0) if self.script else [("ok", 0, 0)]
        self._pending = list(results[1:])
        return self._load(results[0])

    def store(self, keys=None):
        # as _core.Connection.store() for a result it does not keep: the cursor fetch()es
        return None

    def query_result(self, sql, keys=None):
        # as _core.Connection.query_result() (src/statement.c): query() and the first
        # result's rows in one call
        if self.query(sql) > 0:
            rows = tuple(self.fetch(-1, keys))
            return (rows, self.description, self.description_flags, len(rows), 0,
                    self.warning_count)
        return ((), None, None, self.affected_rows, self.insert_id, self.warning_count)

    def fetch(self, n=-1, keys=None):
        rows = self._cur[2] if self.rows_pending else []
        self.rows_pending = False
        if keys is not None:
            return [dict(zip(keys, r)) for r in rows]
        return list(rows)

    def next_result(self):
        self.rows_pending = False
        if not self._pending:
            return -1
        return self._load(self._pending.pop(0))

    def discard(self):
        self.rows_pending = False
        self._pending = []


class FakeConnection(mysqlc.Connection):
    """A Connection whose core is FakeCore (no socket, no handshake)."""

    def __init__(self, max_allowed_packet=16 * 1024 * 1024):
        self._conn = FakeCore()
        self._core_module = FakeCoreModule()
        self.charset, self.encoding = "utf8mb4", "utf-8"
        self._encoders = None
        self._binary_prefix = False
        self._owner = None
        self._max_allowed_packet = max_allowed_packet
        self.cursorclass = cursors.Cursor
        self.messages = []
        self._lock = threading.Lock()


def test_cursor_execute_fetch_and_rowcount():
    conn = FakeConnection()
    cur = conn.cursor()
    assert cur.rowcount == -1 and cur.description is None and cur.arraysize == 1
    with pytest.raises(mysqlc.ProgrammingError):
        cur.fetchone()
    conn._conn.script = [[("rows", ["a", "b"], [(1, "x"), (2, "y"), (3, "z")])]]
    assert cur.execute("SELECT a, b FROM t WHERE a > %s", (0,)) == 3
    assert conn._conn.sent[-1] == b"SELECT a, b FROM t WHERE a > 0"
    assert cur._executed == conn._conn.sent[-1]
    assert cur.rowcount == 3 and cur.rownumber == 0
    assert [d[0] for d in cur.description] == ["a", "b"]
    assert cur.fetchone() == (1, "x")
    assert cur.fetchmany() == ((2, "y"),)
    assert cur.fetchmany(5) == ((3, "z"),)
    assert cur.fetchone() is None
    assert cur.fetchall() == ()
    cur.scroll(0, "absolute")
    assert cur.fetchall() == ((1, "x"), (2, "y"), (3, "z"))
    with pytest.raises(IndexError):
        cur.scroll(3, "absolute")
    with pytest.raises(IndexError):
        cur.scroll(-4)
    with pytest.raises(mysqlc.ProgrammingError):
        cur.scroll(0, "sideways")
    cur.scroll(1, "absolute")
    assert list(cur) == [(2, "y"), (3, "z")] and cur.rownumber == 3

    conn._conn.script = [[("ok", 2, 17)]]
    assert cur.execute("UPDATE t SET a = 1") == 2
    assert conn._conn.sent[-1] == b"UPDATE t SET a = 1"       # no %-processing without args
    assert cur.lastrowid == 17 and cur.description is None
    assert cur.fetchone() is None and cur.fetchall() == ()


def test_cursor_args_none_vs_empty():
    conn = FakeConnection()
    cur = conn.cursor()
    cur.execute("SELECT '100%'")
    assert conn._conn.sent[-1] == b"SELECT '100%'"
    cur.execute("SELECT '100%%'", ())
    assert conn._conn.sent[-1] == b"SELECT '100%'"
    cur.execute("SELECT %s", 5)                               # lone value, as PyMySQL
    assert conn._conn.sent[-1] == b"SELECT 5"
    assert cur.mogrify("SELECT %(x)s", {"x": "it's"}) == "SELECT 'it\\'s'"


def test_dict_cursor_duplicate_names():
    conn = FakeConnection()
    cur = conn.cursor(cursors.DictCursor)
    conn._conn.script = [[("rows", ["t.id", "u.id", "t.name"], [(1, 2, "n")])]]
    cur.execute("SELECT t.id, u.id, t.name FROM t JOIN u")
    assert cur.fetchall() == ({"id": 1, "u.id": 2, "name": "n"},)


def test_nextset_and_ownership():
    conn = FakeConnection()
    c1, c2 = conn.cursor(), conn.cursor()
    conn._conn.script = [[("rows", ["a"], [(1,)]), ("rows", ["b"], [(2,), (3,)]), ("ok", 4, 0)]]
    c1.execute("SELECT 1; SELECT 2; UPDATE ...")
    assert c1.fetchall() == ((1,),)
    assert c1.nextset() is True and c1.fetchall() == ((2,), (3,)) and c1.rowcount == 2
    assert c1.nextset() is True and c1.rowcount == 4 and c1.description is None
    assert c1.nextset() is None
    # results left unread by c1 are drained before c2's statement; c1 loses them
    conn._conn.script = [[("rows", ["a"], [(1,)]), ("rows", ["b"], [(2,)])], [("ok", 1, 0)]]
    c1.execute("SELECT 1; SELECT 2")
    c2.execute("DELETE FROM t")
    assert c2.rowcount == 1
    assert c1.nextset() is None


def test_executemany_rewrites_and_splits():
    conn = FakeConnection(max_allowed_packet=1024 + 100)
    cur = conn.cursor()
    rows = [(i, "v%d" % i) for i in range(10)]
    conn._conn.script = [[("ok", 4, 1)], [("ok", 4, 5)], [("ok", 2, 9)]]
    n = cur.executemany("INSERT INTO t (a, b) VALUES (%s, %s) ON DUPLICATE KEY UPDATE b=b", rows)
    sent = conn._conn.sent
    assert n == 10 and cur.rowcount == 10 and cur.lastrowid == 9
    assert len(sent) == 3
    assert all(len(s) <= 100 for s in sent)
    assert sent[0] == (b"INSERT INTO t (a, b) VALUES (0, 'v0'),(1, 'v1'),(2, 'v2'),(3, 'v3')"
                       b" ON DUPLICATE KEY UPDATE b=b")
    assert all(s.startswith(b"INSERT INTO t (a, b) VALUES (") for s in sent)
    assert all(s.endswith(b" ON DUPLICATE KEY UPDATE b=b") for s in sent)
    joined = b",".join(s[len(b"INSERT INTO t (a, b) VALUES "):-len(b" ON DUPLICATE KEY UPDATE b=b")]
                       for s in sent)
    assert joined == b",".join(b"(%d, 'v%d')" % (i, i) for i in range(10))


def test_executemany_max_stmt_length_and_generator():
    conn = FakeConnection()
    cur = conn.cursor()
    cur.max_stmt_length = 40
    n = cur.executemany("INSERT INTO t VALUES (%s)", (i for i in range(20)))
    assert n == 0            # FakeCore answers OK with 0 rows by default
    assert all(len(s) <= 40 for s in conn._conn.sent)
    assert b",".join(s[len(b"INSERT INTO t VALUES "):] for s in conn._conn.sent) == \
        b",".join(b"(%d)" % i for i in range(20))


def test_executemany_falls_back_to_execute_loop():
    conn = FakeConnection()
    cur = conn.cursor()
    conn._conn.script = [[("ok", 1, 0)], [("ok", 0, 0)], [("ok", 1, 0)]]
    n = cur.executemany("UPDATE t SET a = %s WHERE b = %s", [(1, 2), (3, 4), (5, 6)])
    assert n == 2 and cur.rowcount == 2
    assert conn._conn.sent == [b"UPDATE t SET a = 1 WHERE b = 2", b"UPDATE t SET a = 3 WHERE b = 4",
                               b"UPDATE t SET a = 5 WHERE b = 6"]
    # a placeholder in ON DUPLICATE KEY UPDATE: no rewrite, one statement per row
    conn._conn.sent.clear()
    cur.executemany("INSERT INTO t (a) VALUES (%s) ON DUPLICATE KEY UPDATE a = %s", [(1, 2), (3, 4)])
    assert len(conn._conn.sent) == 2


def test_executemany_empty():
    conn = FakeConnection()
    cur = conn.cursor()
    assert cur.executemany("INSERT INTO t VALUES (%s)", []) is None
    assert cur.executemany("INSERT INTO t VALUES (%s)", iter(())) is None
    assert conn._conn.sent == []


def test_callproc():
    conn = FakeConnection()
    cur = conn.cursor()
    assert cur.callproc("p", (1, "a")) == (1, "a")
    # mysqlclient 2.2+: the name and the variables are backquoted identifiers
    assert conn._conn.sent == [b"SET @`_p_0`=1,@`_p_1`='a'", b"CALL `p`(@`_p_0`,@`_p_1`)"]
    conn._conn.sent.clear()
    cur.callproc("q")
    assert conn._conn.sent == [b"CALL `q`()"]


def test_cursor_close_and_context_manager():
    conn = FakeConnection()
    with conn.cursor() as cur:
        conn._conn.script = [[("rows", ["a"], [(1,)]), ("rows", ["b"], [(2,)])]]
        cur.execute("SELECT 1; SELECT 2")
    assert cur.connection is None
    assert not conn._conn.more_results           # its unread result was drained
    with pytest.raises(mysqlc.ProgrammingError):
        cur.execute("SELECT 1")
    cur.close()                                  # idempotent
    cur.setinputsizes((1,))
    cur.setoutputsizes(1)


def test_connection_transactions_on_fake_core():
    conn = FakeConnection()
    conn.commit()
    conn.rollback()
    assert conn._conn.sent == [b"COMMIT", b"ROLLBACK"]


# ---------------------------------------------------------------- options

def test_resolve_charset_options():
    from mysqlc.connections import _resolve_charset
    assert _resolve_charset("utf8mb4", None) == ("utf8mb4", "utf-8", 45, None)
    assert _resolve_charset(None, None) == ("utf8mb4", "utf-8", 45, None)
    assert _resolve_charset("latin1", None) == ("latin1", "cp1252", 8, None)
    assert _resolve_charset("utf8mb4", "utf8mb4_unicode_ci") == ("utf8mb4", "utf-8", 224, None)
    assert _resolve_charset(None, "latin1_bin") == ("latin1", "cp1252", 47, None)
    # ids above the shared range go through SET NAMES after connecting
    assert _resolve_charset("utf8mb4", "utf8mb4_0900_ai_ci") == (
        "utf8mb4", "utf-8", 45, "SET NAMES utf8mb4 COLLATE utf8mb4_0900_ai_ci")
    assert _resolve_charset(None, "utf8mb4_uca1400_ai_ci")[2:] == (
        45, "SET NAMES utf8mb4 COLLATE utf8mb4_uca1400_ai_ci")
    with pytest.raises(mysqlc.NotSupportedError):
        _resolve_charset("klingon", None)
    with pytest.raises(mysqlc.NotSupportedError):
        _resolve_charset("utf16", None)
    with pytest.raises(mysqlc.ProgrammingError):
        _resolve_charset("utf8mb4", "x; DROP TABLE t")


@pytest.mark.parametrize("kwargs", [
    {"protocol": "pipe"}, {"named_pipe": True},   # (use_unicode=False works)
])
def test_unsupported_options_raise_before_connecting(kwargs):
    if mysqlc._core is None:
        pytest.skip("mysqlc._core is not built")
    with pytest.raises(mysqlc.NotSupportedError):
        mysqlc.connect(host="127.0.0.1", port=1, **kwargs)


def test_modules_reimport_cleanly():
    for name in ("mysqlc.errors", "mysqlc._charsets", "mysqlc.times", "mysqlc.converters",
                 "mysqlc.cursors", "mysqlc.connections"):
        importlib.import_module(name)
