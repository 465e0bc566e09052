"""An HTTP server of a test's own on 127.0.0.1, on a free port, answering from a thread: a
sign-in provider's documents (tests/oidc), a webhook receiver (tests/webhooks).

    class Handler(QuietHandler):
        def do_GET(self): ...

    served = LoopbackServer(Handler)  # served.site: "http://127.0.0.1:<port>"
    ...
    served.close()
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps the test's output clean (no line per request)."""

    def log_message(self, *args):
        pass


class LoopbackServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.site = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
