"""A small local OpenAI-compatible server for fault tests (no network beyond 127.0.0.1).

Each request to /v1/chat/completions pops the next scripted `Reply`; when the script is
empty the server answers 500. Requests are recorded so tests can assert what was sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str/bytes sent as is
    delay_s: float = 0.0


def chat_completion(
    *,
    content: str | None = None,
    tool_args: dict | str | None = None,
    tool_name: str = "MemoryDecision",
    model: str = "fake-model",
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
) -> dict:
    """An OpenAI chat.completion body; tool_args gives a tool call (instructor TOOLS mode)."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    finish = "stop"
    if tool_args is not None:
        arguments = tool_args if isinstance(tool_args, str) else json.dumps(tool_args)
        message["tool_calls"] = [
            {
                "id": "call_fake_1",
                "type": "function",
                "function": {"name": tool_name, "arguments": arguments},
            }
        ]
        finish = "tool_calls"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1763800000,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass
class FakeOpenAI:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                try:
                    fake.requests.append({"path": self.path, "json": json.loads(raw)})
                except ValueError:
                    fake.requests.append({"path": self.path, "raw": raw})
                reply = (
                    fake.replies.popleft()
                    if fake.replies
                    else Reply(500, {"error": {"message": "no script"}})
                )
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = reply.body
                payload = (
                    json.dumps(body).encode()
                    if isinstance(body, dict | list)
                    else (body.encode() if isinstance(body, str) else (body or b""))
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, once per test.
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
