"""Stored procedures (issue 4): ``callproc()`` and ``CALL`` with several result sets and
OUT/INOUT parameters, ``nextset()`` across all of them.

- ``callproc(name, args)`` follows mysqlclient: ``SET @_name_0=..., @_name_1=...`` then
  ``CALL name(@_name_0, @_name_1, ...)``; the procedure's result sets come one after the
  other with ``nextset()``, then the CALL's own final result (no columns); OUT/INOUT
  values are read afterwards with ``SELECT @_name_1, ...``.
- ``CALL`` through ``cursor(prepared=True)`` with ``?`` placeholders: MariaDB allows a
  placeholder for an OUT/INOUT parameter and sends the values in an extra result set
  flagged SERVER_PS_OUT_PARAMS (0x1000), after the procedure's own result sets and before
  the final OK; the core surfaces it as one more result set (one row, a column per
  OUT/INOUT parameter, binary-decoded with its declared type).  A user variable also works
  for an OUT parameter; a literal does not (error 1414).
"""

import datetime
import decimal

import pytest

import mysqlc
import mysqlc.cursors
from mysqlc.constants import FIELD_TYPE, SERVER_STATUS

# each test runs on mysqlc.connect and on mysqlc.aio (tests/_apis.py, conftest's `api`)
pytestmark = pytest.mark.both_apis

D = decimal.Decimal
td = datetime.timedelta

PROC_TWO_SETS = """
CREATE PROCEDURE p_two(IN a INT, OUT b INT, INOUT c VARCHAR(40))
BEGIN
  SELECT a AS first, 'one' AS label;
  SELECT seq, CONCAT('row', seq) AS name FROM seq_1_to_3;
  SET b = a * 10;
  SET c = CONCAT(c, '+', a);
END"""

PROC_TYPES = """
CREATE PROCEDURE p_types(IN k INT, OUT m DECIMAL(10,2), OUT d DATETIME(6), OUT tm TIME(3),
                         OUT f DOUBLE, OUT u BIGINT UNSIGNED, OUT bl BLOB, OUT n INT,
                         INOUT s VARCHAR(20) CHARACTER SET utf8mb4)
BEGIN
  SET m = -12.5 * k, d = '2024-02-29 01:02:03.000004', tm = '-01:00:00.5', f = 0.1,
      u = 18446744073709551615, bl = X'00FF', n = NULL, s = CONCAT(s, '😀', k);
END"""

PROC_ERROR = """
CREATE PROCEDURE p_err()
BEGIN
  SELECT 'before' AS x;
  SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom in p_err';
END"""

PROC_NO_ARGS = """
CREATE PROCEDURE p_noargs()
BEGIN
  SELECT 1 AS one;
  SELECT 2 AS two;
END"""

PROC_MODIFIES = """
CREATE PROCEDURE p_mod(IN v INT)
BEGIN
  INSERT INTO cp_t VALUES (v), (v + 1);
END"""


@pytest.fixture
def procs(conn):
    cur = conn.cursor()
    names = ["p_two", "p_types", "p_err", "p_noargs", "p_mod"]
    for name in names:
        cur.execute("DROP PROCEDURE IF EXISTS %s" % name)
    for sql in (PROC_TWO_SETS, PROC_TYPES, PROC_ERROR, PROC_NO_ARGS, PROC_MODIFIES):
        cur.execute(sql)
    cur.close()
    yield conn
    if conn.open:
        cur = conn.cursor()
        for name in names:
            cur.execute("DROP PROCEDURE IF EXISTS %s" % name)


def _all_sets(cur):
    """[(column names or None, rows as a list)] for the current and every next result."""
    out = []
    while True:
        names = [d[0] for d in cur.description] if cur.description else None
        out.append((names, list(cur.fetchall())))
        if not cur.nextset():
            return out


def _usable(conn):
    cur = conn.cursor()
    cur.execute("SELECT 'still usable'")
    assert cur.fetchall() == (("still usable",),)
    cur.close()


# =========================================================================== callproc

def test_callproc_two_result_sets_and_out_parameter(procs):
    conn = procs
    cur = conn.cursor()
    args = (5, None, "in")
    assert cur.callproc("p_two", args) == args            # returned unchanged
    assert [d[0] for d in cur.description] == ["first", "label"]
    assert cur.rowcount == 1
    assert cur.fetchall() == ((5, "one"),)
    assert cur.nextset() is True
    assert [d[0] for d in cur.description] == ["seq", "name"]
    assert cur.fetchall() == ((1, "row1"), (2, "row2"), (3, "row3"))
    assert cur.rowcount == 3
    assert cur.nextset() is True                          # the CALL's own result
    assert cur.description is None
    assert cur.fetchall() in ((), [])
    assert cur.nextset() is None
    cur.execute("SELECT @_p_two_0, @_p_two_1, @_p_two_2")
    assert cur.fetchall() == ((5, 50, "in+5"),)
    _usable(conn)


def test_callproc_out_values_after_the_result_sets_are_skipped(procs):
    conn = procs
    cur = conn.cursor()
    cur.callproc("p_two", (7, 0, "x"))
    # not reading the result sets: the next statement drops them first
    cur.execute("SELECT @_p_two_1, @_p_two_2")
    assert cur.fetchall() == ((70, "x+7"),)
    _usable(conn)


def test_callproc_dict_and_unbuffered_cursors(procs):
    conn = procs
    for cls in (mysqlc.cursors.DictCursor, mysqlc.cursors.SSCursor, mysqlc.cursors.SSDictCursor):
        cur = conn.cursor(cls)
        cur.callproc("p_two", (2, None, "d"))
        sets = _all_sets(cur)
        rows = [r for _, r in sets]
        if cls in (mysqlc.cursors.DictCursor, mysqlc.cursors.SSDictCursor):
            assert rows[0] == [{"first": 2, "label": "one"}]
            assert rows[1][2] == {"seq": 3, "name": "row3"}
        else:
            assert rows[0] == [(2, "one")]
            assert rows[1] == [(1, "row1"), (2, "row2"), (3, "row3")]
        assert len(sets) == 3 and sets[2] == (None, [])
        cur.execute("SELECT @_p_two_1, @_p_two_2")
        got = cur.fetchall()
        assert list(got) in ([(20, "d+2")], [{"@_p_two_1": 20, "@_p_two_2": "d+2"}])
        cur.close()
    _usable(conn)


def test_callproc_without_arguments(procs):
    cur = procs.cursor()
    assert cur.callproc("p_noargs") == ()
    assert _all_sets(cur) == [(["one"], [(1,)]), (["two"], [(2,)]), (None, [])]
    _usable(procs)


def test_callproc_typed_out_values_through_user_variables(procs):
    cur = procs.cursor()
    cur.callproc("p_types", (2, None, None, None, None, None, None, 5, "s"))
    assert _all_sets(cur) == [(None, [])]                  # no result set of its own
    cur.execute("SELECT @_p_types_1, @_p_types_4, @_p_types_5, @_p_types_6, @_p_types_7, "
                "@_p_types_8")
    # user variables keep DECIMAL, DOUBLE, integer and string types (not temporal ones)
    assert cur.fetchall() == ((D("-25.00"), 0.1, 18446744073709551615, b"\x00\xff", None,
                               "s😀2"),)


def test_callproc_error_inside_the_procedure(procs):
    conn = procs
    cur = conn.cursor()
    cur.callproc("p_err")
    assert cur.fetchall() == (("before",),)
    with pytest.raises(mysqlc.OperationalError) as ei:
        cur.nextset()
    assert ei.value.args[0] == 1644
    assert "boom in p_err" in str(ei.value)
    _usable(conn)
    with pytest.raises(mysqlc.OperationalError) as ei:      # as mysqlclient maps 1305
        cur.callproc("p_does_not_exist", (1,))
    assert ei.value.args[0] == 1305
    _usable(conn)


def test_call_statement_directly(procs):
    conn = procs
    cur = conn.cursor()
    cur.execute("SET @io = 'direct'")
    cur.execute("CALL p_two(3, @o, @io)")
    assert _all_sets(cur) == [(["first", "label"], [(3, "one")]),
                              (["seq", "name"], [(1, "row1"), (2, "row2"), (3, "row3")]),
                              (None, [])]
    cur.execute("SELECT @o, @io")
    assert cur.fetchall() == ((30, "direct+3"),)


def test_procedure_modifying_data_reports_affected_rows(procs):
    conn = procs
    cur = conn.cursor()
    cur.execute("CREATE TEMPORARY TABLE cp_t (v INT)")
    cur.callproc("p_mod", (10,))
    assert cur.description is None
    assert cur.rowcount == 2
    assert cur.nextset() is None
    pcur = conn.cursor(prepared=True)
    pcur.execute("CALL p_mod(?)", (20,))
    assert pcur.description is None
    while pcur.nextset():
        pass
    cur.execute("SELECT v FROM cp_t ORDER BY v")
    assert cur.fetchall() == ((10,), (11,), (20,), (21,))


# =========================================================================== prepared CALL

def _status(conn):
    return conn._conn.server_status


def test_prepared_call_with_out_and_inout_placeholders(procs):
    """The binary protocol's OUT-parameter result set: after the two result sets of the
    procedure, one row with the OUT (b) and INOUT (c) values, flagged
    SERVER_PS_OUT_PARAMS, then the final OK."""
    conn = procs
    pcur = conn.cursor(prepared=True)
    pcur.execute("CALL p_two(?, ?, ?)", (6, None, "y"))
    assert pcur.fetchall() == ((6, "one"),)
    assert not _status(conn) & SERVER_STATUS.SERVER_PS_OUT_PARAMS
    assert pcur.nextset() is True
    assert pcur.fetchall() == ((1, "row1"), (2, "row2"), (3, "row3"))
    assert not _status(conn) & SERVER_STATUS.SERVER_PS_OUT_PARAMS
    assert pcur.nextset() is True
    assert _status(conn) & SERVER_STATUS.SERVER_PS_OUT_PARAMS
    assert [d[0] for d in pcur.description] == ["b", "c"]
    assert [d[1] for d in pcur.description] == [FIELD_TYPE.LONG, FIELD_TYPE.VAR_STRING]
    assert pcur.fetchall() == ((60, "y+6"),)
    assert pcur.rowcount == 1
    assert pcur.nextset() is True                          # the final OK
    assert pcur.description is None
    assert pcur.nextset() is None
    _usable(conn)
    # the statement is cached: again, with other values (INOUT value changes type)
    pcur.execute("CALL p_two(?, ?, ?)", (-1, 0, 12345))
    sets = _all_sets(pcur)
    assert sets[2] == (["b", "c"], [(-10, "12345+-1")])
    assert len(sets) == 4 and sets[3] == (None, [])
    _usable(conn)


def test_prepared_call_out_parameters_are_binary_decoded_with_their_types(procs):
    conn = procs
    pcur = conn.cursor(prepared=True)
    pcur.execute("CALL p_types(?, ?, ?, ?, ?, ?, ?, ?, ?)", (2,) + (None,) * 7 + ("s",))
    assert _status(conn) & SERVER_STATUS.SERVER_PS_OUT_PARAMS
    assert [d[0] for d in pcur.description] == ["m", "d", "tm", "f", "u", "bl", "n", "s"]
    row = pcur.fetchone()
    assert row == (D("-25.00"), datetime.datetime(2024, 2, 29, 1, 2, 3, 4),
                   -td(hours=1, microseconds=500000), 0.1, 18446744073709551615,
                   b"\x00\xff", None, "s😀2")
    assert [type(v) for v in row] == [D, datetime.datetime, td, float, int, bytes,
                                      type(None), str]
    assert pcur.nextset() is True and pcur.description is None
    assert pcur.nextset() is None
    _usable(conn)


def test_prepared_call_dict_cursor_out_parameters(procs):
    pcur = procs.cursor(mysqlc.cursors.DictCursor, prepared=True)
    pcur.execute("CALL p_two(?, ?, ?)", (4, None, "q"))
    sets = _all_sets(pcur)
    assert sets[0][1] == [{"first": 4, "label": "one"}]
    assert sets[2][1] == [{"b": 40, "c": "q+4"}]


def test_prepared_sscursor_call(procs):
    """CALL through cursor(SSCursor, prepared=True): MariaDB opens no server-side cursor
    for a CALL; the results stream as with SSCursor, the OUT set included."""
    conn = procs
    pcur = conn.cursor(mysqlc.cursors.SSCursor, prepared=True)
    pcur.execute("CALL p_two(?, ?, ?)", (8, None, "z"))
    assert pcur.fetchone() == (8, "one")
    assert pcur.nextset() is True
    assert pcur.fetchone() == (1, "row1")                  # the rest is dropped by nextset
    assert pcur.nextset() is True
    assert list(pcur) == [(80, "z+8")]
    assert pcur.nextset() is True
    assert pcur.nextset() is None
    _usable(conn)


def test_prepared_call_out_parameters_into_user_variables(procs):
    conn = procs
    cur = conn.cursor()
    cur.execute("SET @io = 'var'")
    pcur = conn.cursor(prepared=True)
    pcur.execute("CALL p_two(?, @o, @io)", (7,))
    sets = _all_sets(pcur)
    # no OUT-parameter result set: the values went into the variables
    assert sets == [(["first", "label"], [(7, "one")]),
                    (["seq", "name"], [(1, "row1"), (2, "row2"), (3, "row3")]),
                    (None, [])]
    cur.execute("SELECT @o, @io")
    assert cur.fetchall() == ((70, "var+7"),)


def test_prepared_call_out_parameter_as_literal_is_refused(procs):
    conn = procs
    pcur = conn.cursor(prepared=True)
    with pytest.raises(mysqlc.OperationalError) as ei:
        pcur.execute("CALL p_two(?, 1, ?)", (1, "x"))
    assert ei.value.args[0] == 1414                        # not a variable
    _usable(conn)
    pcur.execute("SELECT ?", (5,))
    assert pcur.fetchall() == ((5,),)


def test_prepared_call_error_inside_the_procedure(procs):
    conn = procs
    pcur = conn.cursor(prepared=True)
    pcur.execute("CALL p_err()")
    assert pcur.fetchall() == (("before",),)
    with pytest.raises(mysqlc.OperationalError) as ei:
        pcur.nextset()
    assert ei.value.args[0] == 1644
    _usable(conn)
    pcur.execute("CALL p_noargs()")
    assert _all_sets(pcur) == [(["one"], [(1,)]), (["two"], [(2,)]), (None, [])]
