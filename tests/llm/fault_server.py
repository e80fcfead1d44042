"""A loopback OpenAI-compatible server that answers like the scripted fake and, on a
seeded share of requests, misbehaves the ways real endpoints do (tests only)."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from jubensha.llm.base import Message, Request
from jubensha.llm.fake import ScriptedModel

FAULTS = ("500", "429", "reset", "hang", "invalid_json", "non_utf8", "empty", "prose",
          "truncated_json", "wrong_fields", "refusal", "huge")
SLOW_FAULTS = ("drip", "quota")
"""Asked for by name only: a valid reply dripped a byte every ``drip_s`` (a read timeout
never fires), and a 429 whose Retry-After is an hour (an exhausted quota)."""


def body(text: str) -> bytes:
    return json.dumps({
        "id": "x", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}).encode()


class FaultServer:
    """``share`` of requests get one of ``faults`` (chosen by the seeded generator); the
    rest get the scripted fake's answer to the same request. ``served`` counts faults."""

    def __init__(self, share: float, faults: tuple[str, ...] = FAULTS, seed: int = 0,
                 hang_s: float = 2.0, drip_s: float = 0.5) -> None:
        self.share, self.faults, self.hang_s, self.drip_s = share, faults, hang_s, drip_s
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.served: dict[str, int] = {}
        self.requests = 0
        fake = ScriptedModel(seed=seed)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                data = json.loads(self.rfile.read(length))
                fault = server.draw()
                try:
                    if fault == "reset":
                        self.connection.close()
                        return
                    if fault == "hang":
                        time.sleep(server.hang_s)
                    status, payload = server.reply(fault, data, fake)
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    if fault in ("429", "quota"):
                        self.send_header("Retry-After", "0" if fault == "429" else "3600")
                    self.end_headers()
                    if fault == "drip":
                        server.drip(self.wfile, payload)
                        return
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)

    def draw(self) -> str | None:
        with self.lock:
            self.requests += 1
            if self.random.random() >= self.share:
                return None
            fault = self.random.choice(self.faults)
            self.served[fault] = self.served.get(fault, 0) + 1
            return fault

    def drip(self, out: Any, payload: bytes) -> None:
        for byte in payload:
            out.write(bytes([byte]))
            out.flush()
            time.sleep(self.drip_s)

    def reply(self, fault: str | None, data: dict[str, Any], fake: ScriptedModel
              ) -> tuple[int, bytes]:
        if fault in ("500", "429", "quota"):
            return (429 if fault == "quota" else int(fault),
                    json.dumps({"error": {"message": fault}}).encode())
        if fault == "invalid_json":
            return 200, b"<html>502 Bad Gateway</html>"
        if fault == "non_utf8":
            return 200, b'{"id": "\xff\xfe\xfa"}'
        if fault == "truncated_json":
            return 200, body("x")[:40]
        if fault == "empty":
            return 200, body("")
        if fault == "prose":
            return 200, body("Let me think about this carefully before I answer.")
        if fault == "wrong_fields":
            return 200, body(json.dumps({"unexpected": 1}))
        if fault == "refusal":
            return 200, body("I'm sorry, but I can't help with that.")
        if fault == "huge":
            return 200, body("word " * 40_000)
        schema = (data.get("response_format") or {}).get("json_schema", {}).get("schema")
        request = Request(messages=[Message(role=m["role"], content=m["content"])
                                    for m in data["messages"]], json_schema=schema)
        reply = asyncio.run(fake.generate(request))
        return 200, body(reply.text)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
