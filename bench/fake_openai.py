"""A loopback OpenAI-compatible chat server that answers like the scripted fake after a
fixed latency, for ``concurrency.py``; run it as its own process so its CPU does not share
the client's interpreter.

    python bench/fake_openai.py [--latency 0.2]   # prints its base URL, serves until killed
"""

from __future__ import annotations

import argparse
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from jubensha.llm.base import Message, Request
from jubensha.llm.fake import ScriptedModel


def completion(text: str) -> bytes:
    return json.dumps({
        "id": "bench", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}).encode()


def answer(fake: ScriptedModel, request: Request) -> str:
    """The fake's reply, run without an event loop (it never waits when its latency is 0;
    ``asyncio.run`` per request cost the server ~1 ms of a busy CPU)."""
    step = fake.generate(request).__await__()
    try:
        next(step)
    except StopIteration as done:
        return done.value.text
    raise RuntimeError("the scripted fake waited; give it no latency")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog: 64 clients connect at once


def serve(latency: float) -> None:
    fake = ScriptedModel()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint
        # headers and body go out in two writes; with Nagle the body waits for the client's
        # delayed ACK (~40 ms a call). Real servers (uvicorn, vLLM) set TCP_NODELAY too.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            started = time.perf_counter()
            data = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            schema = (data.get("response_format") or {}).get("json_schema", {}).get("schema")
            request = Request(messages=[Message(role=m["role"], content=m["content"])
                                        for m in data["messages"]], json_schema=schema)
            payload = completion(answer(fake, request))
            time.sleep(max(0.0, latency - (time.perf_counter() - started)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = Server(("127.0.0.1", 0), Handler)
    host, port = server.server_address[:2]
    print(f"http://{host}:{port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    serve(parser.parse_args().latency)
