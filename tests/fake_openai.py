"""A small local OpenAI-compatible server for fault tests (no network beyond 127.0.0.1).

Each request to /v1/chat/completions pops the next scripted `Reply` (a tool-call answer is
sent as text when the request has no tools: `as_asked`); when the script is empty the
server answers `default_reply` if one is set (a benchmark answering an unbounded number of
requests alike), else 500. /v1/embeddings pops the next scripted `embedding_replies`
entry and otherwise embeds the input itself (`embedding_body`), with rows in reverse order
as a server may send them (each carries its `index`). No key is required. Requests, with
their headers, are recorded so tests can assert what was sent.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
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


def as_asked(body: Any, sent: Any) -> Any:
    """A scripted tool-call answer as the request asked for it: a request without tools
    (json_schema / json / md_json modes, llm_mode auto against a local server) gets the tool
    call's arguments as the message text, as a server constraining the output would send."""
    if not isinstance(body, dict) or not isinstance(sent, dict) or "tools" in sent:
        return body
    choices = body.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = message.get("tool_calls")
    if not calls:
        return body
    text = calls[0]["function"]["arguments"]
    changed = {**message, "content": text, "tool_calls": None}
    return {**body, "choices": [{**choices[0], "message": changed, "finish_reason": "stop"}]}


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic bag-of-words vector, not unit length (the client must normalise it)."""
    vector = [0.0] * dim
    for word in text.lower().replace(".", " ").split():
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dim] += 3.0
    return vector


def embedding_body(texts: list[str], *, model: str, dim: int) -> dict:
    """An OpenAI `list` of embeddings for texts, rows reversed (each names its input index)."""
    rows = [
        {"object": "embedding", "index": i, "embedding": fake_vector(text, dim)}
        for i, text in enumerate(texts)
    ]
    tokens = sum(len(text.split()) for text in texts)
    return {
        "object": "list",
        "data": rows[::-1],
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


@dataclass
class FakeOpenAI:
    replies: deque[Reply] = field(default_factory=deque)
    embedding_replies: deque[Reply] = field(default_factory=deque)
    embedding_dim: int = 16
    # Answers chat requests once the script is empty: the same Reply every time, or a function
    # of the request's JSON body (a benchmark answering each request as it asks).
    default_reply: Reply | Callable[[Any], Reply] | None = None
    requests: list[dict] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def wait_for_requests(self, count: int, timeout_s: float = 30.0) -> bool:
        """Wait until `count` requests have arrived (each is recorded before its reply's delay)."""
        deadline = time.monotonic() + timeout_s
        while len(self.requests) < count:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                headers = {key.lower(): value for key, value in self.headers.items()}
                try:
                    sent = json.loads(raw)
                    fake.requests.append({"path": self.path, "json": sent, "headers": headers})
                except ValueError:
                    sent = None
                    fake.requests.append({"path": self.path, "raw": raw, "headers": headers})
                if self.path.endswith("/embeddings"):
                    reply = fake._embedding_reply(sent)
                elif fake.replies:
                    reply = fake.replies.popleft()
                elif callable(fake.default_reply):
                    reply = fake.default_reply(sent)
                elif fake.default_reply is not None:
                    reply = fake.default_reply
                else:
                    reply = Reply(500, {"error": {"message": "no script"}})
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = as_asked(reply.body, sent)
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

    def _embedding_reply(self, sent: Any) -> Reply:
        if self.embedding_replies:
            return self.embedding_replies.popleft()
        texts = sent["input"] if isinstance(sent, dict) else None
        if not isinstance(texts, list):
            return Reply(400, {"error": {"message": "input must be a list of strings"}})
        return Reply(
            body=embedding_body(texts, model=str(sent.get("model")), dim=self.embedding_dim)
        )

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
