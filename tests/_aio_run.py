"""Run a coroutine from a plain (synchronous) test: pytest-asyncio is not a test
requirement.  ``loop="uvloop"`` runs it on uvloop's event loop instead of asyncio's."""

import asyncio

LOOPS = ["asyncio", "uvloop"]


def run(coro, loop="asyncio"):
    if loop == "uvloop":
        import uvloop
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(coro)
    return asyncio.run(coro)
