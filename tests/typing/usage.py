"""A typed usage sample of mysqlc: what a user writes, checked by ``mypy --strict``.

``tools/typecheck.sh`` runs ``mypy --strict tests/typing/`` (with ``pyproject.toml``'s
``[tool.mypy]``).  The ``assert_type`` calls fail the check when an annotation of
mysqlc gives another type (``Any`` included: ``assert_type(x, T)`` needs exactly T);
each ``# type: ignore[code]`` marks a line that must be an error, and ``--strict``
(``warn_unused_ignores``) fails the check when it no longer is (an annotation that
became too permissive).  Nothing here runs at import; :func:`main` runs it all
against a server (``python tests/typing/usage.py HOST PORT USER PASSWORD DB``).
"""

from __future__ import annotations

import ssl
import sys
from typing import Any, Optional

import numpy
import pandas
import polars
import pyarrow
from typing_extensions import assert_type

import mysqlc
from mysqlc.bulk import load_table
from mysqlc.columnar import ArrowStream
from mysqlc.cursors import (
    BaseCursor, Cursor, DictCursor, PreparedCursor, PreparedDictCursor, SSCursor,
    SSDictCursor,
)


def connect(host: str, port: int, user: str, password: str, db: str) -> mysqlc.Connection:
    conn = mysqlc.connect(host=host, port=port, user=user, password=password,
                          database=db, charset="utf8mb4", autocommit=True,
                          connect_timeout=5.0, read_timeout=None)
    assert_type(conn, mysqlc.Connection)
    assert_type(conn.open, bool)
    assert_type(conn.get_server_info(), str)
    assert_type(conn.thread_id(), int)
    assert_type(conn.insert_id(), int)
    assert_type(conn.info(), Optional[str])
    assert_type(conn.escape_string("it's"), bytes)
    assert_type(conn.literal(42), bytes)
    mysqlc.connect(host=host, port=port, user=user, password=password, database=db,
                   cursorclass=DictCursor, ssl={"ca": "/etc/ssl/ca.pem"}, compress=True)
    mysqlc.connect(host=host, ssl=ssl.create_default_context(cafile="/etc/ssl/ca.pem"))
    mysqlc.connect(host, user, password, db, port)   # mysqlclient's positional order
    mysqlc.connect(host=host, no_such_option=1)  # type: ignore[call-arg]
    mysqlc.connect(host=host, port=port, autocommit="yes")  # type: ignore[arg-type]
    mysqlc.connect(host=host, port="3307")  # type: ignore[arg-type]   # TypeError at run time
    return conn


def tuple_rows(conn: mysqlc.Connection) -> list[int]:
    with conn.cursor(Cursor) as cur:
        assert_type(cur, Cursor)
        n = cur.execute("SELECT %s, %s", (1, "a"))
        assert_type(n, int)
        row = cur.fetchone()
        assert_type(row, Optional[tuple[Any, ...]])
        assert_type(cur.fetchmany(2), tuple[tuple[Any, ...], ...])
        assert_type(cur.fetchall(), tuple[tuple[Any, ...], ...])
        assert_type(cur.rowcount, int)
        assert_type(cur.lastrowid, Optional[int])
        assert_type(cur.description, Optional[tuple[tuple[Any, ...], ...]])
        cur.execute("SELECT %(a)s", {"a": 1})
        cur.executemany("INSERT INTO t VALUES (%s, %s)", [(1, "a"), (2, "b")])
        out: list[int] = []
        for r in cur:
            assert_type(r, tuple[Any, ...])
            out.append(int(r[0]))
        if row is not None:
            row["id"]  # type: ignore[call-overload]
        cur.execute(42)  # type: ignore[arg-type]
        return out


def dict_rows(conn: mysqlc.Connection) -> list[str]:
    cur = conn.cursor(DictCursor)
    assert_type(cur, DictCursor)
    cur.execute("SELECT 1 AS id, 'x' AS name")
    row = cur.fetchone()
    assert_type(row, Optional[dict[str, Any]])
    assert row is not None
    names = [str(r["name"]) for r in cur.fetchall()]
    assert_type(cur.fetchall(), tuple[dict[str, Any], ...])
    for r in cur:
        assert_type(r, dict[str, Any])
    row[0]  # type: ignore[index]
    cur.close()
    return names


def other_cursors(conn: mysqlc.Connection) -> None:
    assert_type(conn.cursor(), BaseCursor)
    with conn.cursor(SSCursor) as ss:
        ss.execute("SELECT 1")
        assert_type(ss.fetchone(), Optional[tuple[Any, ...]])
        assert_type(ss.fetchmany(100), list[tuple[Any, ...]])
    with conn.cursor(SSDictCursor) as ssd:
        ssd.execute("SELECT 1 AS a")
        assert_type(ssd.fetchall(), list[dict[str, Any]])
    prepared = conn.cursor(PreparedCursor)
    prepared.execute("SELECT ?", (1,))
    assert_type(prepared.fetchone(), Optional[tuple[Any, ...]])
    assert_type(conn.cursor(PreparedDictCursor).fetchone(), Optional[dict[str, Any]])
    assert_type(conn.cursor(DictCursor, prepared=True), DictCursor)
    conn.cursor(dict)  # type: ignore[type-var]


def columnar(conn: mysqlc.Connection, dsn: str) -> None:
    assert_type(mysqlc.read_sql(conn, "SELECT 1"), pyarrow.Table)
    assert_type(mysqlc.read_sql(conn, "SELECT 1", "arrow"), pyarrow.Table)
    assert_type(mysqlc.read_sql(dsn, "SELECT 1", "pandas"), pandas.DataFrame)
    assert_type(mysqlc.read_sql(conn, "SELECT 1", return_type="polars"), polars.DataFrame)
    assert_type(mysqlc.read_sql(conn, "SELECT %s", "numpy", params=(1,),
                                partition_on="id", partitions=4, decimal="float"),
                dict[str, numpy.ndarray[Any, Any]])
    mysqlc.read_sql(42, "SELECT 1")  # type: ignore[call-overload]
    cur = conn.cursor()
    cur.execute("SELECT 1 AS a")
    assert_type(cur.fetch_arrow_table(), pyarrow.Table)
    assert_type(cur.fetch_record_batches(1000), pyarrow.RecordBatchReader)
    assert_type(cur.fetch_arrow_stream(), ArrowStream)
    assert_type(cur.fetch_df(decimal="str"), pandas.DataFrame)
    assert_type(cur.fetch_polars(), polars.DataFrame)
    assert_type(cur.fetchnumpy(), dict[str, numpy.ndarray[Any, Any]])
    polars.from_arrow(cur.fetch_arrow_table())


def bulk(conn: mysqlc.Connection, df: pandas.DataFrame) -> int:
    cur = conn.cursor()
    n = cur.load_table("t", [(1, "a"), (2, "b")], columns=["id", "name"])
    assert_type(n, int)
    m = load_table(cur, ("db", "t"), df, method="infile", on_warning="raise")
    assert_type(m, int)
    return n + m


def errors(conn: mysqlc.Connection) -> Optional[str]:
    try:
        conn.cursor().execute("SELECT * FROM no_such_table")
    except mysqlc.ProgrammingError as exc:
        assert_type(exc.sqlstate, str)
        return exc.sqlstate
    except (mysqlc.OperationalError, mysqlc.IntegrityError):
        raise
    except mysqlc.Error as exc:
        code: Any = exc.args[0]
        return str(code)
    finally:
        assert_type(conn.errno(), int)
        assert_type(conn.sqlstate(), str)
    return None


def pymysql_flavour(host: str, user: str, password: str) -> Optional[Any]:
    from mysqlc import pymysql
    from mysqlc.pymysql.cursors import DictCursor as PyMySQLDictCursor

    conn = pymysql.connect(host=host, user=user, password=password, database="test",
                           cursorclass=PyMySQLDictCursor, defer_connect=True)
    assert_type(conn, pymysql.connections.Connection)
    conn.connect()
    with conn.cursor(PyMySQLDictCursor) as cur:
        assert_type(cur, PyMySQLDictCursor)
        assert_type(cur.execute("SELECT %s", (1,)), int)
        row = cur.fetchone()
    pymysql.connect(host, user)  # type: ignore[call-arg]  # keyword-only, as PyMySQL
    conn.close()
    return row


def main(argv: list[str]) -> None:
    host, port, user, password, db = argv[1], int(argv[2]), argv[3], argv[4], argv[5]
    with connect(host, port, user, password, db) as conn:
        assert_type(conn, mysqlc.Connection)
        print(tuple_rows(conn), dict_rows(conn), errors(conn))


if __name__ == "__main__":
    main(sys.argv)
