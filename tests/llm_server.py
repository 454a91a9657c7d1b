"""A local OpenAI-compatible chat-completions server for tests: real HTTP on 127.0.0.1, scripted answers.

Every model call in the test suite goes through litellm's real client to this server, so HTTP, JSON,
images as data URLs, timeouts, status codes and malformed bodies are all exercised for real.

    with LLMServer() as server:
        server.reply_json({"penalty": "50%"})           # next answer: this JSON as the message content
        server.fail(429)                                 # or: a status code (with a retry-after header)
        server.reply_raw(b"not json", status=200)        # or: a malformed body
        ...
        server.requests                                  # every request body received, parsed
        server.peak_concurrency                          # the most requests it was answering at once
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    body: bytes = b""
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def completion_body(
    content: str, *, model: str = "test-model", prompt_tokens: int = 11, completion_tokens: int = 7
) -> bytes:
    """A chat.completion response whose single choice says ``content``."""
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    ).encode()


class LLMServer:
    """A threaded HTTP server answering ``POST /v1/chat/completions`` from a script.

    Answers are taken from a queue in order; when the queue is empty, ``default`` (a function of the
    request body) answers, or, without one, a 500 that says the script ran out.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        # (arrival, finish) of every answered request, time.monotonic(); and the most answered at once.
        self.timings: list[tuple[float, float]] = []
        self.active = 0
        self.peak_concurrency = 0
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.default: Callable[[dict[str, Any]], Reply] | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes; without this, Nagle's algorithm meets the
                # client's delayed ACK and every answer stalls ~40 ms.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                arrived = time.monotonic()
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append(body)
                    server.paths.append(self.path)
                    reply = server._script.popleft() if server._script else None
                    server.active += 1
                    server.peak_concurrency = max(server.peak_concurrency, server.active)
                try:
                    if reply is None:
                        reply = (
                            server.default(body)
                            if server.default
                            else Reply(500, b'{"error": "script ran out"}')
                        )
                    if reply.delay:
                        # The delay counts from the request's arrival, like a remote model's latency.
                        time.sleep(max(0.0, reply.delay - (time.monotonic() - arrived)))
                finally:
                    # Finished before the answer goes out: the client cannot have seen it yet, so a request
                    # it sends next never overlaps this one here.
                    with server._lock:
                        server.active -= 1
                        server.timings.append((arrived, time.monotonic()))
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # Polled for shutdown every 50 ms (the default 0.5 s was half a second of every test's teardown).
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="llm-server", daemon=True
        )

    @property
    def url(self) -> str:
        """The base URL to give litellm as ``api_base`` (``OPENAI_API_BASE``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> LLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- scripting ------------------------------------------------------------------------------------

    def push(self, reply: Reply) -> None:
        with self._lock:
            self._script.append(reply)

    def reply_text(self, content: str, *, delay: float = 0.0, **usage: int) -> None:
        """Queue an answer whose message content is ``content``."""
        self.push(Reply(200, completion_body(content, **usage), delay))

    def reply_json(self, data: Any, *, delay: float = 0.0, **usage: int) -> None:
        """Queue an answer whose message content is ``data`` as JSON."""
        self.reply_text(json.dumps(data), delay=delay, **usage)

    def fail(self, status: int, *, delay: float = 0.0, retry_after: float | None = None) -> None:
        """Queue an error status with an OpenAI-style error body."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        body = json.dumps(
            {"error": {"message": f"scripted {status}", "type": "test", "code": status}}
        ).encode()
        self.push(Reply(status, body, delay, headers))

    def reply_raw(self, body: bytes, *, status: int = 200, delay: float = 0.0) -> None:
        """Queue a raw body (for malformed answers)."""
        self.push(Reply(status, body, delay))

    # -- reading what arrived ------------------------------------------------------------------------

    def prompt_texts(self, index: int = -1) -> str:
        """All text parts of the messages of one request, joined (images left out)."""
        parts: list[str] = []
        for message in self.requests[index].get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(item.get("text", "") for item in content if item.get("type") == "text")
        return "\n".join(parts)

    def image_urls(self, index: int = -1) -> list[str]:
        """The image URLs (data URLs) of one request, in order."""
        urls: list[str] = []
        for message in self.requests[index].get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                for item in content:
                    if item.get("type") == "image_url":
                        image = item["image_url"]
                        urls.append(image["url"] if isinstance(image, dict) else image)
        return urls


def main() -> None:
    """Serve one fixed answer after a fixed delay, from its own process (benchmarks use this)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="A local OpenAI-compatible server with one scripted answer.")
    parser.add_argument("--answer", required=True, help="the message content to answer every request with")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before answering")
    args = parser.parse_args()
    body = completion_body(args.answer)
    with LLMServer() as server:
        server.default = lambda request: Reply(200, body, delay=args.delay)
        print(server.url, flush=True)
        sys.stdin.read()  # serve until the parent closes our standard input


if __name__ == "__main__":
    main()
