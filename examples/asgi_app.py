#!/usr/bin/env python3
"""A small ASGI application on mysqlc.aio: a connection pool opened at startup (the
ASGI lifespan protocol), JSON endpoints that query it, and a per-request time limit
that stops the statement on the server when it is exceeded.

    GET /items?max_price=10     items cheaper than max_price (JSON list)
    GET /items/<id>             one item, or 404
    GET /slow?seconds=5         SELECT SLEEP(seconds) under a 1 s limit -> 504, and the
                                pooled connection stays usable

Plain ASGI, no framework.  Run it under any ASGI server, e.g.

    MYSQLC_DSN=mysql://user:pw@127.0.0.1:3306/db uvicorn examples.asgi_app:app

or check it without one (a private MariaDB is started when no DSN is given; the
requests are driven in-process):

    python examples/asgi_app.py --self-test [--dsn mysql://...]
"""

import argparse
import asyncio
import json
import os
import sys
import urllib.parse

import mysqlc
import mysqlc.aio

REQUEST_LIMIT = 1.0   # seconds a request may spend in the database

SCHEMA = ("CREATE TABLE IF NOT EXISTS asgi_items (id INT PRIMARY KEY, "
          "name VARCHAR(50) NOT NULL, price DECIMAL(8,2) NOT NULL)")


class App:
    """The ASGI application: ``await app(scope, receive, send)``."""

    def __init__(self, dsn=None, **connect_kwargs):
        self.dsn = dsn
        self.connect_kwargs = connect_kwargs
        self.pool = None

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
        elif scope["type"] == "http":
            status, body = await self.route(scope)
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": json.dumps(body).encode()})

    async def lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.startup()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.pool.close()
                await self.pool.wait_closed()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def startup(self):
        kwargs = dict(self.connect_kwargs)
        if self.dsn:
            kwargs["host"] = self.dsn   # connect() takes a DSN where the host goes
        self.pool = await mysqlc.aio.create_pool(minsize=2, maxsize=10, autocommit=True,
                                                 **kwargs)
        async with self.pool.acquire() as conn:
            async with conn.cursor() as cur:
                await cur.execute(SCHEMA)
                await cur.executemany(
                    "INSERT IGNORE INTO asgi_items VALUES (%s, %s, %s)",
                    [(i, "item %d" % i, i * 1.25) for i in range(1, 101)])

    async def route(self, scope):
        path = scope["path"]
        query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode()))
        try:
            async with asyncio.timeout(REQUEST_LIMIT):
                if path == "/items":
                    return 200, await self.items(float(query.get("max_price", "1e9")))
                if path.startswith("/items/"):
                    item = await self.item(int(path.rsplit("/", 1)[1]))
                    return (200, item) if item else (404, {"error": "no such item"})
                if path == "/slow":
                    return 200, await self.slow(float(query.get("seconds", "5")))
        except TimeoutError:
            # the statement was stopped on the server (KILL QUERY) and the connection
            # drained before it went back to the pool
            return 504, {"error": "the database took longer than %g s" % REQUEST_LIMIT}
        except ValueError:
            return 400, {"error": "bad parameter"}
        return 404, {"error": "not found"}

    async def items(self, max_price):
        async with self.pool.acquire() as conn:
            async with conn.cursor(mysqlc.aio.DictCursor) as cur:
                await cur.execute("SELECT id, name, CAST(price AS DOUBLE) AS price "
                                  "FROM asgi_items WHERE price < %s ORDER BY id",
                                  (max_price,))
                return list(await cur.fetchall())

    async def item(self, item_id):
        async with self.pool.acquire() as conn:
            async with conn.cursor(mysqlc.aio.DictCursor) as cur:
                await cur.execute("SELECT id, name, CAST(price AS DOUBLE) AS price "
                                  "FROM asgi_items WHERE id = %s", (item_id,))
                return await cur.fetchone()

    async def slow(self, seconds):
        async with self.pool.acquire() as conn:
            async with conn.cursor() as cur:
                await cur.execute("SELECT SLEEP(%s)", (seconds,))
                return {"slept": seconds}


app = App(os.environ.get("MYSQLC_DSN"))


async def _request(application, path):
    """Drive one HTTP request through the ASGI callable; returns (status, decoded body)."""
    scope_path, _, qs = path.partition("?")
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)
    await application({"type": "http", "method": "GET", "path": scope_path,
                       "query_string": qs.encode()}, receive, send)
    return sent[0]["status"], json.loads(sent[1]["body"])


async def self_test(dsn):
    application = App(dsn)
    events, replies = asyncio.Queue(), asyncio.Queue()
    lifespan = asyncio.ensure_future(application({"type": "lifespan"}, events.get,
                                                 replies.put))
    await events.put({"type": "lifespan.startup"})
    assert (await replies.get())["type"] == "lifespan.startup.complete"

    status, body = await _request(application, "/items?max_price=5")
    assert status == 200 and [r["id"] for r in body] == [1, 2, 3], body
    status, body = await _request(application, "/items/7")
    assert status == 200 and body == {"id": 7, "name": "item 7", "price": 8.75}, body
    assert (await _request(application, "/items/1000"))[0] == 404
    results = await asyncio.gather(*(_request(application, "/items/%d" % i)
                                     for i in range(1, 51)))
    assert [b["id"] for _, b in results] == list(range(1, 51)), "cross-talk between requests"
    status, body = await _request(application, "/slow?seconds=30")
    assert status == 504, (status, body)
    status, body = await _request(application, "/items/3")
    assert status == 200 and body["id"] == 3, body
    print("self-test: /items, /items/<id>, 50 concurrent requests, and a 504 after the "
          "1 s limit (the pool still serves) -- all OK")

    await events.put({"type": "lifespan.shutdown"})
    assert (await replies.get())["type"] == "lifespan.shutdown.complete"
    await lifespan


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--self-test", action="store_true", help="run the requests in-process")
    parser.add_argument("--dsn", help="server to use (default: a private MariaDB)")
    args = parser.parse_args(argv)
    if not args.self_test:
        parser.print_help()
        return 0
    if args.dsn:
        asyncio.run(self_test(args.dsn))
        return 0
    from mysqlc.server import get_server
    with get_server() as srv:
        kw = srv.connect_kwargs()
        dsn = "mysql://%s:%s@%s:%s/%s" % (kw["user"], kw["password"], kw["host"], kw["port"],
                                          kw["database"])
        asyncio.run(self_test(dsn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
