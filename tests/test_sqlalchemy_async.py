"""SQLAlchemy's asyncio extension (``create_async_engine``, ``AsyncSession``) on
mysqlc's asyncio dialect (mysqlc/sqlalchemy_aio.py over mysqlc.aio), against the
test server.

Every scenario runs four times: ``mariadb+mysqlc`` (the sync dialect's name:
``create_async_engine`` picks the asyncio dialect through
``get_async_dialect_cls``), ``mysql+mysqlc_async`` (the explicit name),
``mariadb+mysqlc`` with ``prepared=True`` (server-side prepared statements), and
``mariadb+mysqlc`` on uvloop's event loop.  Each test runs its own event loop:
an async engine belongs to the loop it was used on.
"""

import asyncio
import datetime
import decimal
import os
import time
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest

sa = pytest.importorskip("sqlalchemy")
pytest.importorskip("greenlet")

from sqlalchemy import event, func, select, text  # noqa: E402
from sqlalchemy.dialects import registry  # noqa: E402
from sqlalchemy.exc import DBAPIError  # noqa: E402
from sqlalchemy.ext.asyncio import (  # noqa: E402
    AsyncSession, async_sessionmaker, create_async_engine,
)
from sqlalchemy.orm import selectinload  # noqa: E402
from sqlalchemy.pool import AsyncAdaptedQueuePool  # noqa: E402

import mysqlc  # noqa: E402
from mysqlc import sqlalchemy_aio  # noqa: E402
from mysqlc.sqlalchemy_dialect import MariaDBDialect_mysqlc, MySQLDialect_mysqlc  # noqa: E402

from _helpers import kill_connection  # noqa: E402
# the sync ORM test's models and data, here through AsyncSession
from test_sqlalchemy import Author, Base, Item, Post, _seed, _url, tag_link  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["mariadb+mysqlc", "mysql+mysqlc_async", "mariadb+mysqlc/prepared",
           "mariadb+mysqlc/uvloop"]


def _register_async_names():
    """The ``_async`` names come from the entry points of pyproject.toml; an
    editable install made from an older pyproject.toml lacks them, so they are
    registered here from the same declarations (what
    test_async_names_are_entry_points checks)."""
    installed = {ep.name for ep in entry_points(group="sqlalchemy.dialects")}
    for name, value in _declared_entry_points().items():
        if name not in installed:
            module, _, attr = value.partition(":")
            registry.register(name, module, attr)


def _declared_entry_points():
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = pytest.importorskip("tomllib").load(f)["project"]
    return project["entry-points"]["sqlalchemy.dialects"]


_register_async_names()


@pytest.fixture(params=TARGETS)
def target(request, server):
    """(url, create_async_engine keyword arguments, event loop factory) of one variant."""
    driver, _, variant = request.param.partition("/")
    loop_factory = None   # asyncio's default loop
    if variant == "uvloop":
        loop_factory = pytest.importorskip("uvloop").new_event_loop
    return (_url(driver, server.connect_kwargs()),
            {"prepared": True} if variant == "prepared" else {}, loop_factory)


@pytest.fixture
def root_conn(server):
    c = mysqlc.connect(**server.connect_kwargs(root=True))
    yield c
    c.close()


def run(target, scenario, **engine_kw):
    """Run ``await scenario(engine)`` on a fresh event loop with a fresh engine
    (tables created first, dropped and the engine disposed afterwards)."""
    url, options, loop_factory = target

    async def main():
        engine = create_async_engine(url, **options, **engine_kw)
        try:
            async with engine.begin() as conn:
                await conn.run_sync(Base.metadata.drop_all)
                await conn.run_sync(Base.metadata.create_all)
            await scenario(engine)
            async with engine.begin() as conn:
                await conn.run_sync(Base.metadata.drop_all)
        finally:
            await engine.dispose()

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(main())


def _cursors(engine):
    """The DBAPI cursors of the statements run on `engine`, as (statement, cursor)."""
    seen = []
    event.listen(engine.sync_engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *a: seen.append((statement, cursor)))
    return seen


async def _thread_id(aconn):
    raw = await aconn.get_raw_connection()
    return raw.driver_connection.thread_id()


# ---------------------------------------------------------------- the dialect

def test_async_names_are_entry_points():
    """pyproject.toml declares the four dialect names, each resolving to the
    right class; where the installed metadata has them, SQLAlchemy's registry
    loads the same classes."""
    declared = _declared_entry_points()
    expected = {
        "mysql.mysqlc": MySQLDialect_mysqlc,
        "mariadb.mysqlc": MariaDBDialect_mysqlc,
        "mysql.mysqlc_async": sqlalchemy_aio.MySQLDialect_mysqlc_async,
        "mariadb.mysqlc_async": sqlalchemy_aio.MariaDBDialect_mysqlc_async,
    }
    assert set(declared) == set(expected)
    for name, cls in expected.items():
        assert EntryPoint(name, declared[name], "sqlalchemy.dialects").load() is cls
        assert registry.load(name) is cls
    # one URL for both engines: the sync classes name their asyncio variants
    url = sa.engine.make_url("mariadb+mysqlc://u@h/d")
    assert MariaDBDialect_mysqlc.get_async_dialect_cls(url) \
        is sqlalchemy_aio.MariaDBDialect_mysqlc_async
    assert MySQLDialect_mysqlc.get_async_dialect_cls(url) \
        is sqlalchemy_aio.MySQLDialect_mysqlc_async
    assert sqlalchemy_aio.MariaDBDialect_mysqlc_async.get_async_dialect_cls(url) \
        is sqlalchemy_aio.MariaDBDialect_mysqlc_async
    assert MariaDBDialect_mysqlc.get_dialect_cls(url) is MariaDBDialect_mysqlc


def test_sync_engine_is_unchanged(server):
    """create_engine() on the same URL keeps the sync dialect and mysqlc.Connection."""
    eng = sa.create_engine(_url("mariadb+mysqlc", server.connect_kwargs()))
    try:
        assert type(eng.dialect) is MariaDBDialect_mysqlc and not eng.dialect.is_async
        with eng.connect() as conn:
            assert isinstance(conn.connection.dbapi_connection, mysqlc.Connection)
    finally:
        eng.dispose()


def test_engine_and_dialect(target):
    url, options, loop_factory = target
    import mysqlc.aio

    async def scenario(engine):
        loop_module = type(asyncio.get_running_loop()).__module__
        assert loop_module.startswith("uvloop") == (loop_factory is not None)
        dialect = engine.dialect
        assert dialect.is_async and dialect.driver == "mysqlc"
        assert isinstance(dialect, sqlalchemy_aio.MySQLDialect_mysqlc_async)
        assert dialect.name == url.split("+")[0]
        assert dialect.prepared == bool(options.get("prepared"))
        assert isinstance(engine.pool, AsyncAdaptedQueuePool)
        assert dialect.dbapi.paramstyle == "format"
        assert dialect.dbapi.OperationalError is mysqlc.OperationalError
        assert dialect.server_version_info >= (5,)
        async with engine.connect() as conn:
            # the isolation levels of the sync dialect, AUTOCOMMIT through autocommit()
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            assert (await conn.get_raw_connection()).driver_connection.get_autocommit()
            await conn.execution_options(isolation_level="READ COMMITTED")
            assert await conn.get_isolation_level() == "READ COMMITTED"
            assert not (await conn.get_raw_connection()).driver_connection.get_autocommit()
            await conn.rollback()
        async with engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver_conn = raw.driver_connection
            assert isinstance(driver_conn, mysqlc.aio.Connection)
            # FOUND_ROWS requested, as the sync dialect does (sane rowcount)
            assert driver_conn.sync.client_flag & mysqlc.constants.CLIENT.FOUND_ROWS
            assert await conn.scalar(text("SELECT 1 + :x"), {"x": 41}) == 42
            result = await conn.execute(text("SELECT 'é', CAST(:d AS DATE)"),
                                        {"d": datetime.date(2024, 2, 29)})
            assert result.all() == [("é", datetime.date(2024, 2, 29))]

    run(target, scenario)


def test_errors_are_mysqlc_errors(target):
    async def scenario(engine):
        async with engine.connect() as conn:
            with pytest.raises(sa.exc.ProgrammingError) as info:
                await conn.execute(text("SELECT * FROM no_such_table_here"))
            assert isinstance(info.value.orig, mysqlc.ProgrammingError)
            assert info.value.orig.args[0] == 1146
            assert not info.value.connection_invalidated
            await conn.rollback()
            assert await conn.scalar(text("SELECT 2")) == 2   # still usable

    run(target, scenario)


# ---------------------------------------------------------------- ORM

def test_orm_relationships_selectinload(target):
    """The sync ORM test's data (test_sqlalchemy._seed, run in the session's
    greenlet), read back with selectinload chains, then changed through the
    unit of work: update, delete-orphan cascade, many-to-many link rows."""
    async def scenario(engine):
        Session = async_sessionmaker(engine, expire_on_commit=False)
        async with Session() as s:
            await s.run_sync(_seed)
            await s.commit()
        async with Session() as s:
            authors = (await s.scalars(
                select(Author).order_by(Author.name)
                .options(selectinload(Author.posts).selectinload(Post.tags)))).all()
            assert [(a.name, [p.title for p in a.posts]) for a in authors] == [
                ("Ann", ["first", "second"]), ("Bob", ["third"])]
            ann = authors[0]
            assert ann.joined == datetime.datetime(2024, 5, 17, 8, 30, 1, 123456)
            assert ann.posts[0].body == "héllo ☃ 🐍"
            assert ann.posts[0].score == decimal.Decimal("1.500")
            assert [t.name for t in ann.posts[0].tags] == ["python", "sql"]
            # a relationship loaded on demand (refresh: no implicit IO in asyncio)
            post = await s.scalar(select(Post).where(Post.title == "third"))
            await s.refresh(post, ["author"])
            assert post.author.name == "Bob"
            ann.posts[1].title = "second (edited)"
            await s.delete(ann)
            await s.commit()
        async with Session() as s:
            assert (await s.scalars(select(Post.title))).all() == ["third"]
            assert await s.scalar(select(func.count()).select_from(tag_link)) == 0
            # an UPDATE that changes nothing still counts the matched rows (FOUND_ROWS)
            result = await s.execute(sa.update(Post).values(title=Post.title))
            assert result.rowcount == 1
            await s.rollback()

    run(target, scenario)


def _author(name):
    return Author(name=name, joined=datetime.datetime(2020, 1, 1))


def test_orm_savepoints(target):
    """begin_nested(): a savepoint rolled back drops its rows only, one released
    keeps them, and an IntegrityError inside one leaves the outer transaction
    usable."""
    async def scenario(engine):
        async with AsyncSession(engine) as s:
            async with s.begin():
                s.add(_author("outer"))
                nested = await s.begin_nested()
                s.add(_author("inner-rolled-back"))
                await s.flush()
                assert await s.scalar(select(func.count()).select_from(Author)) == 2
                await nested.rollback()
                async with s.begin_nested():
                    s.add(_author("inner-kept"))
                with pytest.raises(sa.exc.IntegrityError) as info:
                    async with s.begin_nested():
                        s.add(_author("outer"))   # duplicate unique name
                        await s.flush()
                assert info.value.orig.args[0] == 1062
            names = (await s.scalars(select(Author.name).order_by(Author.name))).all()
            assert names == ["inner-kept", "outer"]

    run(target, scenario)


# ---------------------------------------------------------------- streaming

STREAM_ROWS = 200_000
STREAM_SQL = "SELECT seq, REPEAT('x', 200) FROM seq_1_to_%d" % STREAM_ROWS


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_stream_results_reads_as_consumed(target, root_conn):
    """``AsyncConnection.stream`` uses the SSCursor: after the first partition
    the statement is still running on the server (the rest of its ~44 MB result
    has not been read; with prepared=True the server-side cursor holds it), and
    reading all of it keeps the process's memory far
    below what a buffered result of these rows takes (~70 MB of Python objects)."""
    import mysqlc.aio
    prepared = bool(target[1])

    async def scenario(engine):
        cursors = _cursors(engine)
        async with engine.connect() as conn:
            tid = await _thread_id(conn)
            result = await conn.stream(text(STREAM_SQL))
            statement, cursor = cursors[-1]
            assert statement == STREAM_SQL and cursor.server_side
            assert isinstance(cursor._cursor, mysqlc.aio.cursors.SSCursor)
            before = _rss()
            first = await result.fetchmany(1000)
            assert [r[0] for r in first] == list(range(1, 1001))
            cur = root_conn.cursor()
            cur.execute("SELECT command FROM information_schema.processlist "
                        "WHERE id = %s", (tid,))
            # text protocol: the statement is still sending rows; prepared: a
            # server-side cursor (COM_STMT_FETCH) holds them between fetches
            assert cur.fetchone() == (("Sleep",) if prepared else ("Query",))
            count, last, peak = len(first), first[-1][0], 0
            async for partition in result.partitions(5000):
                count += len(partition)
                last = partition[-1][0]
                peak = max(peak, _rss() - before)
            assert (count, last) == (STREAM_ROWS, STREAM_ROWS)
            if not os.environ.get("MYSQLC_SANITIZED"):   # ASan's shadow and quarantine grow RSS
                assert peak < 25 * 2**20, peak
            # the server ends the statement just after its last packet: poll briefly
            deadline = time.monotonic() + 5
            while True:
                cur.execute("SELECT command FROM information_schema.processlist "
                            "WHERE id = %s", (tid,))
                state = cur.fetchone()
                if state == ("Sleep",) or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            assert state == ("Sleep",)
            # the connection is free again
            assert await conn.scalar(text("SELECT 3")) == 3

    run(target, scenario)


def test_orm_yield_per_streams(target):
    """``AsyncSession.stream_scalars`` with ``yield_per``: ORM objects arrive in
    partitions of that size from the SSCursor; an abandoned stream is closed and
    the session keeps working."""
    import mysqlc.aio

    async def scenario(engine):
        async with AsyncSession(engine) as s:
            s.add_all([Item(name="i%05d" % i, qty=i) for i in range(3000)])
            await s.commit()
        cursors = _cursors(engine)
        async with AsyncSession(engine) as s:
            stmt = select(Item).order_by(Item.id).execution_options(yield_per=250)
            result = await s.stream_scalars(stmt)
            statement, cursor = cursors[-1]
            assert statement.startswith("SELECT sa_item.id")
            assert cursor.server_side
            assert isinstance(cursor._cursor, mysqlc.aio.cursors.SSCursor)
            sizes, rows = [], []
            async for partition in result.partitions():
                sizes.append(len(partition))
                rows.extend((item.name, item.qty) for item in partition)
            assert sizes == [250] * 12
            assert rows == [("i%05d" % i, i) for i in range(3000)]
            # abandoned after a few rows: closing the result drains the rest
            result = await s.stream_scalars(stmt)
            assert len(await result.fetchmany(10)) == 10
            await result.close()
            assert await s.scalar(select(func.count()).select_from(Item)) == 3000

    run(target, scenario)


# ---------------------------------------------------------------- dropped connections

def test_killed_connection_recovered_by_pre_ping(target, root_conn):
    """A pooled connection killed on the server (KILL <thread id> from another
    connection) is found dead by ``pool_pre_ping`` at checkout and replaced."""
    async def scenario(engine):
        async with engine.connect() as conn:
            old = await _thread_id(conn)
            assert await conn.scalar(text("SELECT CONNECTION_ID()")) == old
        kill_connection(root_conn, old)
        async with AsyncSession(engine) as s:
            s.add(_author("after the kill"))
            await s.commit()
            new = await s.scalar(text("SELECT CONNECTION_ID()"))
            assert new != old
        assert engine.pool.checkedin() == 1

    run(target, scenario, pool_size=1, max_overflow=0, pool_pre_ping=True)


def test_killed_connection_without_pre_ping_is_a_disconnect(target, root_conn):
    """Without pre-ping the next statement fails with a disconnect error
    (mysqlc's OperationalError 2006/2013), the pool is invalidated, and the
    statement after that runs on a new connection."""
    async def scenario(engine):
        async with engine.connect() as conn:
            old = await _thread_id(conn)
        kill_connection(root_conn, old)
        async with engine.connect() as conn:
            with pytest.raises(DBAPIError) as info:
                await conn.execute(text("SELECT 1"))
            assert info.value.connection_invalidated
            assert isinstance(info.value.orig, mysqlc.OperationalError)
            assert info.value.orig.args[0] in (2006, 2013, 1927, 4031)
        async with engine.connect() as conn:
            assert await conn.scalar(text("SELECT CONNECTION_ID()")) != old

    run(target, scenario, pool_size=1, max_overflow=0)


def test_cancelled_statement_through_the_engine(target, root_conn):
    """``asyncio.timeout`` around a long statement: mysqlc.aio stops it on the
    server (KILL QUERY), SQLAlchemy treats the cancellation as an exit exception
    and terminates the connection (graceful close, then force close), and the
    pool's next connection answers its own query; no statement is left running."""
    async def scenario(engine):
        async with engine.connect() as conn:
            old = await _thread_id(conn)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.3):
                    await conn.execute(text("SELECT SLEEP(20)"))
        assert engine.pool.checkedout() == 0
        async with engine.connect() as conn:
            assert await conn.scalar(text("SELECT 'mine'")) == "mine"
            assert await _thread_id(conn) != old
        cur = root_conn.cursor()
        cur.execute("SELECT COUNT(*) FROM information_schema.processlist "
                    "WHERE info = %s", ("SELECT SLEEP(20)",))
        assert cur.fetchone() == (0,)

    run(target, scenario, pool_size=1, max_overflow=0)
