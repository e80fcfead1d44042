"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script (tests only)."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    stream: bool = True
    """False: a plain JSON body even to a streamed request (as some servers answer)."""
    raw: bytes | None = None
    """Sent as the body instead of ``body`` (a reply no JSON encoder would write)."""


def completion(text: str, prompt_tokens: int = 11, completion_tokens: int = 7) -> Reply:
    return Reply(body={
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens}})


def stream_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A completion body as the chunks a streaming server sends: one word of the reply
    each, the finish reason, then the usage alone."""
    choice = body["choices"][0]
    words = choice["message"]["content"].split(" ")
    base = {"id": body.get("id", "chatcmpl-test"), "object": "chat.completion.chunk",
            "created": 0, "model": body.get("model", "fake")}
    deltas = [{"content": word if i == 0 else " " + word} for i, word in enumerate(words)]
    if choice["message"].get("reasoning_content"):  # a reasoning server's own field first
        deltas.insert(0, {"reasoning_content": choice["message"]["reasoning_content"]})
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
              for delta in deltas]
    chunks.append({**base, "choices": [{"index": 0, "delta": {},
                                        "finish_reason": choice.get("finish_reason")}]})
    chunks.append({**base, "choices": [], "usage": body.get("usage")})
    return chunks


def error(status: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "test"}},
                 headers=headers or {})


def delayed(reply: Reply, seconds: float) -> Reply:
    return replace(reply, delay_s=seconds)


def embeddings(vectors: list[list[float]]) -> Reply:
    data = [{"object": "embedding", "index": i, "embedding": v}
            for i, v in reversed(list(enumerate(vectors)))]
    return Reply(body={"object": "list", "data": data, "model": "fake",
                       "usage": {"prompt_tokens": 3, "total_tokens": 3}})


class FakeOpenAIServer:
    """Serves scripted replies in order, or ``respond(body)`` for every request when given;
    ``requests`` holds every (path, JSON body) and ``authorizations`` every request's
    ``Authorization`` header (None when absent)."""

    def __init__(self, respond: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.authorizations: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.authorizations.append(self.headers.get("Authorization"))
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                server.requests.append((self.path, body))
                reply = (respond(body) if respond else server.replies.popleft()
                         if server.replies else error(500, "no reply"))
                time.sleep(reply.delay_s)
                if body.get("stream") and reply.stream and reply.status == 200 \
                        and reply.body and "choices" in reply.body:
                    self.stream(reply.body)
                    return
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def stream(self, body: dict[str, Any]) -> None:
                """A completion as server-sent chunks: a word each, then the usage."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for chunk in stream_chunks(body):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
