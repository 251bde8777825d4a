"""`memman serve`'s app run for real by uvicorn in a thread on 127.0.0.1, on a free port.

Started when uvicorn has bound its socket and run the app's startup (an Event set from
`startup`, no sleeping); stopped by uvicorn's own exit flag. Used by tests/test_serve.py and
tests/test_serve_page.py.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import uvicorn
from starlette.applications import Starlette

START_DEADLINE_S = 30.0


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets=None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()  # bound, or failed (then `started` stays False)


@contextlib.contextmanager
def running(app: Starlette) -> Iterator[str]:
    """The app served on 127.0.0.1 while the block runs: its base URL."""
    server = _Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="memman-serve", daemon=True)
    thread.start()
    try:
        if not server.ready.wait(START_DEADLINE_S) or not server.started:
            raise RuntimeError("uvicorn did not start")
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(START_DEADLINE_S)
