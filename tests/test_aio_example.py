"""examples/asgi_app.py, the ASGI example of the README, runs against the test server:
its self-test drives the lifespan protocol, the JSON endpoints, 50 concurrent requests
and a request over its time limit (504, the pooled connection still usable)."""

import importlib.util
import os

import pytest

from _aio_run import LOOPS, run

pytest.importorskip("greenlet")

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "examples", "asgi_app.py")


def _example():
    spec = importlib.util.spec_from_file_location("asgi_app_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("loop", LOOPS)
def test_asgi_example_self_test(conn_kwargs, loop, capsys):
    kw = conn_kwargs
    dsn = "mysql://%s:%s@%s:%s/%s" % (kw["user"], kw["password"], kw["host"], kw["port"],
                                      kw["database"])
    run(_example().self_test(dsn), loop)
    assert "all OK" in capsys.readouterr().out
