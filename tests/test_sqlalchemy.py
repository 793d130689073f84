"""SQLAlchemy 2.x ORM and Core on mysqlc, against the test server.

Every test runs three times: through mysqlc's own dialect (``mysql+mysqlc``),
the same with ``create_engine(..., prepared=True)`` (server-side prepared
statements, binary protocol), and through SQLAlchemy's stock mysqlclient dialect
(``mysql+mysqldb``) after ``mysqlc.install_as_MySQLdb()``.  The ``MySQLdb`` entries of ``sys.modules`` are
restored afterwards, so a real mysqlclient (used by tests/test_pandas.py) is not
disturbed.
"""

import datetime
import decimal
import sys
import urllib.parse

import pytest

sa = pytest.importorskip("sqlalchemy")

from sqlalchemy import (  # noqa: E402
    JSON, Boolean, Column, Date, DateTime, Enum, ForeignKey, Integer, LargeBinary,
    Numeric, String, Table, Text, Time, event, func, insert, inspect, select, text,
)
from sqlalchemy.dialects.mysql import DATETIME, TIME  # noqa: E402
from sqlalchemy.orm import (  # noqa: E402
    DeclarativeBase, Mapped, Session, joinedload, mapped_column, relationship,
    selectinload,
)

import mysqlc  # noqa: E402
from mysqlc.cursors import SSCursor  # noqa: E402
from _helpers import kill_connection  # noqa: E402

DRIVERS = ["mysql+mysqlc", "mysql+mysqlc/prepared", "mysql+mysqldb"]


class Base(DeclarativeBase):
    pass


tag_link = Table(
    "sa_post_tag", Base.metadata,
    Column("post_id", ForeignKey("sa_post.id", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("sa_tag.id", ondelete="CASCADE"), primary_key=True),
)


class Author(Base):
    __tablename__ = "sa_author"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    joined: Mapped[datetime.datetime] = mapped_column(DATETIME(fsp=6))
    posts: Mapped[list["Post"]] = relationship(back_populates="author",
                                               cascade="all, delete-orphan",
                                               order_by="Post.id")


class Post(Base):
    __tablename__ = "sa_post"
    id: Mapped[int] = mapped_column(primary_key=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("sa_author.id"), index=True)
    title: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text, default="")
    score: Mapped[decimal.Decimal] = mapped_column(Numeric(10, 3), default=0)
    author: Mapped[Author] = relationship(back_populates="posts")
    tags: Mapped[list["Tag"]] = relationship(secondary=tag_link, order_by="Tag.name")


class Tag(Base):
    __tablename__ = "sa_tag"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(50), unique=True)


class Item(Base):
    """Bulk inserts and type round trips."""
    __tablename__ = "sa_item"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    qty: Mapped[int] = mapped_column(Integer, default=0)
    price: Mapped[decimal.Decimal] = mapped_column(Numeric(12, 4), nullable=True)
    flag: Mapped[bool] = mapped_column(Boolean, default=False)
    kind: Mapped[str] = mapped_column(Enum("a", "b", "c", name="kind"), default="a")
    day: Mapped[datetime.date] = mapped_column(Date, nullable=True)
    at: Mapped[datetime.time] = mapped_column(TIME(fsp=6), nullable=True)
    stamp: Mapped[datetime.datetime] = mapped_column(DateTime, nullable=True)
    data: Mapped[dict] = mapped_column(JSON, nullable=True)
    blob: Mapped[bytes] = mapped_column(LargeBinary, nullable=True)


# ---------------------------------------------------------------- fixtures

class _MySQLdbShim:
    """install_as_MySQLdb() for the duration of a module-scoped fixture."""

    def __enter__(self):
        self.saved = {k: v for k, v in sys.modules.items()
                      if k == "MySQLdb" or k.startswith("MySQLdb.")}
        mysqlc.install_as_MySQLdb()
        import MySQLdb
        assert MySQLdb.cursors.SSCursor is SSCursor
        return self

    def __exit__(self, *exc):
        for k in [k for k in sys.modules if k == "MySQLdb" or k.startswith("MySQLdb.")]:
            del sys.modules[k]
        sys.modules.update(self.saved)


def _url(driver, kw):
    return "%s://%s:%s@%s:%d/%s?charset=utf8mb4" % (
        driver, urllib.parse.quote(kw["user"], safe=""),
        urllib.parse.quote(kw["password"], safe=""), kw["host"], kw["port"],
        kw["database"])


@pytest.fixture(scope="module", params=DRIVERS)
def target(request, server):
    """(url, create_engine keyword arguments) of the driver variant."""
    kw = server.connect_kwargs()
    driver, _, variant = request.param.partition("/")
    options = {"prepared": True} if variant == "prepared" else {}
    if driver.endswith("+mysqldb"):
        with _MySQLdbShim():
            yield _url(driver, kw), options
    else:
        yield _url(driver, kw), options


@pytest.fixture(scope="module")
def url(target):
    return target[0]


def _engine(target, **kw):
    url, options = target
    return sa.create_engine(url, **options, **kw)


@pytest.fixture(scope="module")
def engine(target):
    eng = _engine(target, pool_size=3, max_overflow=2)
    Base.metadata.drop_all(eng)
    Base.metadata.create_all(eng)
    yield eng
    Base.metadata.drop_all(eng)
    eng.dispose()


@pytest.fixture
def clean(engine):
    with engine.begin() as conn:
        conn.exec_driver_sql("SET foreign_key_checks=0")
        for table in reversed(Base.metadata.sorted_tables):
            conn.exec_driver_sql("DELETE FROM %s" % table.name)
        conn.exec_driver_sql("SET foreign_key_checks=1")
    return engine


@pytest.fixture
def root_conn(server):
    c = mysqlc.connect(**server.connect_kwargs(root=True))
    yield c
    c.close()


# ---------------------------------------------------------------- the dialect

def test_dialect_and_driver(engine, target):
    url, options = target
    assert engine.dialect.name in ("mysql", "mariadb")
    assert engine.dialect.driver == url.split("://")[0].split("+")[1]
    assert engine.dialect.dbapi.paramstyle == "format"
    with engine.connect() as conn:
        dbapi_conn = conn.connection.dbapi_connection
        assert isinstance(dbapi_conn, mysqlc.Connection)
        result = conn.execute(text("SELECT 1"))
        assert result.cursor._prepared \
            == bool(options.get("prepared"))
        result.close()
        # CLIENT.FOUND_ROWS requested by both dialects (sane rowcount)
        assert dbapi_conn.client_flag & mysqlc.constants.CLIENT.FOUND_ROWS
        assert engine.dialect.server_version_info >= (5,)
        assert conn.scalar(text("SELECT 1 + :x"), {"x": 41}) == 42
    assert engine.dialect.supports_server_side_cursors


def test_native_dialect_registered_by_entry_point(server):
    """Both names load mysqlc's dialect classes through the entry points."""
    from sqlalchemy.dialects import registry
    from mysqlc.sqlalchemy_dialect import MariaDBDialect_mysqlc, MySQLDialect_mysqlc
    assert registry.load("mysql.mysqlc") is MySQLDialect_mysqlc
    assert registry.load("mariadb.mysqlc") is MariaDBDialect_mysqlc
    kw = server.connect_kwargs()
    eng = sa.create_engine(_url("mariadb+mysqlc", kw))
    try:
        with eng.connect() as conn:
            assert isinstance(eng.dialect, MariaDBDialect_mysqlc)
            assert conn.scalar(text("SELECT 'x'")) == "x"
    finally:
        eng.dispose()


# ---------------------------------------------------------------- ORM

def _seed(session):
    python, sql = Tag(name="python"), Tag(name="sql")
    ann = Author(name="Ann", joined=datetime.datetime(2024, 5, 17, 8, 30, 1, 123456))
    bob = Author(name="Bob", joined=datetime.datetime(2023, 1, 2, 3, 4, 5))
    ann.posts = [Post(title="first", body="héllo ☃ 🐍", score=decimal.Decimal("1.500"),
                      tags=[python, sql]),
                 Post(title="second", tags=[sql])]
    bob.posts = [Post(title="third")]
    session.add_all([ann, bob])


def test_orm_crud_and_relationships(clean):
    with Session(clean) as s:
        _seed(s)
        s.commit()
        ann_id = s.scalar(select(Author.id).where(Author.name == "Ann"))
        assert ann_id

    with Session(clean) as s:
        ann = s.scalars(select(Author).where(Author.name == "Ann")
                        .options(selectinload(Author.posts).selectinload(Post.tags))).one()
        assert ann.joined == datetime.datetime(2024, 5, 17, 8, 30, 1, 123456)
        assert [p.title for p in ann.posts] == ["first", "second"]
        assert ann.posts[0].body == "héllo ☃ 🐍"
        assert ann.posts[0].score == decimal.Decimal("1.500")
        assert [t.name for t in ann.posts[0].tags] == ["python", "sql"]

        posts = s.scalars(select(Post).options(joinedload(Post.author))
                          .order_by(Post.id)).unique().all()
        assert [(p.title, p.author.name) for p in posts] == [
            ("first", "Ann"), ("second", "Ann"), ("third", "Bob")]

        # update through the unit of work; rowcount checks rely on FOUND_ROWS
        ann.posts[1].title = "second (edited)"
        ann.posts[0].score = ann.posts[0].score  # unchanged value: no UPDATE
        s.commit()
        assert s.scalar(select(Post.title).where(Post.id == ann.posts[1].id)) \
            == "second (edited)"

        # delete-orphan cascade, many-to-many link rows removed by the ORM
        s.delete(ann)
        s.commit()
        assert s.scalar(select(func.count()).select_from(Post)) == 1
        assert s.scalar(select(func.count()).select_from(tag_link)) == 0


def test_update_rowcount_counts_matched_rows(clean):
    """CLIENT.FOUND_ROWS: an UPDATE that changes nothing still reports the
    matched rows, which the ORM's versioning / stale-data checks depend on."""
    with clean.begin() as conn:
        conn.execute(insert(Tag), [{"name": "x"}, {"name": "y"}])
        result = conn.execute(sa.update(Tag).values(name=Tag.name))
        assert result.rowcount == 2


def test_bulk_insert_orm_and_core(clean):
    statements = []

    @event.listens_for(clean, "before_cursor_execute")
    def count(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT"):
            statements.append(executemany)

    try:
        rows = [{"name": "item %d" % i, "qty": i, "price": decimal.Decimal(i) / 8}
                for i in range(2000)]
        with Session(clean) as s:
            s.execute(insert(Item), rows)          # ORM bulk INSERT
            s.commit()
        with clean.begin() as conn:
            result = conn.execute(Item.__table__.insert(),
                                  [{"name": "core %d" % i, "qty": -i} for i in range(500)])
            assert result.rowcount == 500          # supports_sane_multi_rowcount
    finally:
        event.remove(clean, "before_cursor_execute", count)
    assert statements and all(statements)          # sent as executemany
    with Session(clean) as s:
        assert s.scalar(select(func.count()).select_from(Item)) == 2500
        assert s.scalar(select(func.sum(Item.qty)).where(Item.qty >= 0)) == sum(range(2000))
        assert s.scalar(select(Item.price).where(Item.name == "item 7")) \
            == decimal.Decimal("0.8750")


def test_bulk_insert_returns_primary_keys(clean):
    """ORM add_all of many objects: the primary keys come back (lastrowid or
    INSERT..RETURNING on MariaDB >= 10.5)."""
    with Session(clean) as s:
        items = [Item(name="n%d" % i) for i in range(300)]
        s.add_all(items)
        s.commit()
        ids = [item.id for item in items]
        assert len(set(ids)) == 300 and all(ids)
        assert s.scalar(select(Item.name).where(Item.id == ids[123])) == "n123"


def test_type_round_trip(clean):
    values = {
        "name": "types", "qty": -(2 ** 31), "price": decimal.Decimal("-12345678.1234"),
        "flag": True, "kind": "c", "day": datetime.date(1999, 12, 31),
        "at": datetime.time(23, 59, 59, 999999),
        "stamp": datetime.datetime(2038, 1, 19, 3, 14, 7),
        "data": {"a": [1, 2.5, None, True], "s": "ü 🐍", "n": {"x": None}},
        "blob": bytes(range(256)) * 4,
    }
    with Session(clean) as s:
        item = Item(**values)
        s.add(item)
        s.commit()
        item_id = item.id
    with Session(clean) as s:
        got = s.get(Item, item_id)
        for key, value in values.items():
            assert getattr(got, key) == value, key
        # JSON path expressions are compiled by the dialect
        assert s.scalar(select(Item.data["s"].as_string()).where(Item.id == item_id)) \
            == "ü 🐍"


def test_stream_results_uses_server_side_cursor(clean):
    with clean.begin() as conn:
        conn.execute(insert(Item), [{"name": "s%05d" % i, "qty": i} for i in range(5000)])

    with clean.connect() as conn:
        result = conn.execution_options(stream_results=True, max_row_buffer=100).execute(
            select(Item.qty).order_by(Item.id))
        assert isinstance(result.cursor, SSCursor)
        first = result.fetchmany(10)
        assert [r.qty for r in first] == list(range(10))
        # While rows are unread the connection can run nothing else (as mysqlclient)
        with pytest.raises(mysqlc.ProgrammingError) as info:
            conn.connection.dbapi_connection.cursor().execute("SELECT 1")
        assert info.value.args[0] == 2014
        total = sum(r.qty for r in first) + sum(r.qty for r in result)
        assert total == sum(range(5000))
        assert conn.scalar(text("SELECT 7")) == 7      # usable again once drained

    # ORM yield_per streams too; closing the result early drains the rest
    with Session(clean) as s:
        result = s.scalars(select(Item).order_by(Item.id).execution_options(yield_per=250))
        seen = [item.qty for _, item in zip(range(600), result)]
        assert seen == list(range(600))
        result.close()
        assert s.scalar(select(func.count()).select_from(Item)) == 5000


def test_transactions_and_savepoints(clean):
    with Session(clean) as s:
        s.add(Tag(name="kept"))
        s.flush()
        nested = s.begin_nested()                       # SAVEPOINT
        s.add(Tag(name="rolled back"))
        s.flush()
        nested.rollback()                               # ROLLBACK TO SAVEPOINT
        with s.begin_nested():                          # RELEASE SAVEPOINT
            s.add(Tag(name="released"))
        s.commit()
    with Session(clean) as s:
        assert s.scalars(select(Tag.name).order_by(Tag.name)).all() == ["kept", "released"]

    with Session(clean) as s:
        s.add(Tag(name="never"))
        s.flush()
        s.rollback()
        assert s.scalar(select(func.count()).select_from(Tag).where(Tag.name == "never")) == 0

    # a failing statement inside a savepoint does not lose the outer transaction
    with Session(clean) as s:
        s.add(Tag(name="outer"))
        s.flush()
        with pytest.raises(sa.exc.IntegrityError) as info:
            with s.begin_nested():
                s.add(Tag(name="outer"))
                s.flush()
        assert info.value.orig.args[0] == 1062
        s.commit()
        assert s.scalar(select(func.count()).select_from(Tag).where(Tag.name == "outer")) == 1


def test_isolation_levels(engine):
    for level in ("READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"):
        with engine.connect().execution_options(isolation_level=level) as conn:
            assert conn.get_isolation_level() == level
            assert conn.exec_driver_sql("SELECT @@tx_isolation").scalar() \
                == level.replace(" ", "-")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        assert conn.connection.dbapi_connection.get_autocommit() is True
        conn.execute(insert(Tag).values(name="autocommitted"))
    with engine.connect() as conn:
        # the pool restored the default level and autocommit off
        assert conn.connection.dbapi_connection.get_autocommit() is False
        assert conn.scalar(select(Tag.id).where(Tag.name == "autocommitted"))
        conn.execute(sa.delete(Tag).where(Tag.name == "autocommitted"))
        conn.commit()


def _kill(root_conn, dbapi_conn):
    kill_connection(root_conn, dbapi_conn.thread_id())


def test_disconnect_is_detected_and_pool_recovers(target, root_conn):
    eng = _engine(target, pool_size=1, max_overflow=0)
    try:
        with eng.connect() as conn:
            conn.scalar(text("SELECT 1"))
            _kill(root_conn, conn.connection.dbapi_connection)
            with pytest.raises(sa.exc.OperationalError) as info:
                conn.scalar(text("SELECT 1"))
            assert info.value.connection_invalidated
            assert info.value.orig.args[0] in (2006, 2013, 1927)
        with eng.connect() as conn:                     # a fresh connection
            assert conn.scalar(text("SELECT 2")) == 2
    finally:
        eng.dispose()


def test_pool_pre_ping_replaces_dead_connection(target, root_conn):
    eng = _engine(target, pool_size=1, max_overflow=0, pool_pre_ping=True)
    try:
        with eng.connect() as conn:
            old = conn.connection.dbapi_connection
            old_id = old.thread_id()
        _kill(root_conn, old)
        with eng.connect() as conn:                     # the ping fails, pool reconnects
            assert conn.scalar(text("SELECT 3")) == 3
            assert conn.connection.dbapi_connection.thread_id() != old_id
    finally:
        eng.dispose()


def test_reflection(engine):
    insp = inspect(engine)
    names = set(insp.get_table_names())
    assert {"sa_author", "sa_post", "sa_tag", "sa_post_tag", "sa_item"} <= names
    cols = {c["name"]: c for c in insp.get_columns("sa_item")}
    assert cols["id"]["autoincrement"] is True
    assert isinstance(cols["price"]["type"], Numeric) and cols["price"]["type"].scale == 4
    assert cols["name"]["type"].length == 100
    fks = insp.get_foreign_keys("sa_post")
    assert [(fk["referred_table"], fk["constrained_columns"]) for fk in fks] == [
        ("sa_author", ["author_id"])]
    assert any(ix["column_names"] == ["author_id"] for ix in insp.get_indexes("sa_post"))
    assert insp.get_pk_constraint("sa_post_tag")["constrained_columns"] == [
        "post_id", "tag_id"]
    assert [u["column_names"] for u in insp.get_unique_constraints("sa_tag")] == [["name"]]

    meta = sa.MetaData()
    meta.reflect(engine, only=["sa_author", "sa_post"])
    post = meta.tables["sa_post"]
    assert [fk.column.table.name for fk in post.foreign_keys] == ["sa_author"]
    with engine.connect() as conn:                     # a reflected table works in queries
        conn.execute(post.select().where(post.c.id < 0)).all()


def test_window_frame_offsets_change_between_cached_executions(engine):
    # MariaDB cannot bind a frame offset (ROWS BETWEEN ? FOLLOWING); the prepared
    # dialect renders the offsets into each execution's SQL.  The statement is cached
    # by SQLAlchemy once: the second offsets must not reuse the first ones' SQL.
    seq = sa.select(sa.literal_column("seq")).select_from(
        sa.text("seq_1_to_6")).subquery()
    results = []
    for rows in [(0, 1), (0, 3), (0, 1)]:
        stmt = sa.select(sa.func.max(seq.c.seq).over(order_by=seq.c.seq, rows=rows))
        with engine.connect() as conn:
            results.append([r[0] for r in conn.execute(stmt)])
    assert results == [[2, 3, 4, 5, 6, 6], [4, 5, 6, 6, 6, 6], [2, 3, 4, 5, 6, 6]]
