"""A local stand-in for an OpenAI-compatible chat-completions endpoint (127.0.0.1 only).

It streams `chat.completion.chunk` SSE frames the way the real API does — a role delta,
content deltas, tool-call deltas (index, id and name first, arguments in fragments), a
final chunk with `finish_reason`, with `stream_options.include_usage` a last chunk with
no choices and the `usage`, then `data: [DONE]` — over chunked transfer encoding.
Each request pops the next scripted reply; a reply can also be an HTTP error, a stream
that is cut off mid-way (the socket closes inside the chunked body) or a slow answer.
With `respond` set, each reply is computed from the request instead (many conversations
at once: bench/soak.py), and `slow_until` (a monotonic time) delays every reply by
`slow_delay` seconds until then.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, args)
    status: int = 200
    disconnect_after: int | None = None  # frames sent before the socket is cut
    delay: float = 0.0
    fragment: int = 7  # characters per content / arguments fragment
    usage: tuple[int, int] | None = (11, 5)  # (prompt, completion) tokens it reports
    headers: dict[str, str] = field(default_factory=dict)  # sent with an error status


def chunks(
    reply: Reply, model: str = "fake-model", include_usage: bool = False
) -> list[dict[str, Any]]:
    def frame(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    n = reply.fragment
    frames = [frame({"role": "assistant", "content": ""})]
    frames += [frame({"content": reply.text[i : i + n]}) for i in range(0, len(reply.text), n)]
    for index, (call_id, name, args) in enumerate(reply.tool_calls):
        head = {"index": index, "id": call_id, "type": "function"}
        frames.append(
            frame({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
        )
        for i in range(0, len(args), n):
            piece = {"index": index, "function": {"arguments": args[i : i + n]}}
            frames.append(frame({"tool_calls": [piece]}))
    frames.append(frame({}, "tool_calls" if reply.tool_calls else "stop"))
    if include_usage and reply.usage is not None:
        prompt, completion = reply.usage
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        frames.append({**frame({}), "choices": [], "usage": usage})
    return frames


class FakeOpenAI:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.respond: Callable[[dict[str, Any]], Reply] | None = None
        self.slow_until = 0.0
        self.slow_delay = 0.0
        self.slowed = 0  # replies sent late because of `slow_until`
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                if fake.respond is not None:
                    reply = fake.respond(request)
                else:
                    fake.requests.append(request)
                    fake.headers.append(dict(self.headers))
                    reply = fake.replies.pop(0) if fake.replies else Reply(text="(no reply queued)")
                if time.monotonic() < fake.slow_until:
                    fake.slowed += 1
                    time.sleep(fake.slow_delay)
                time.sleep(reply.delay)
                if reply.status != 200:
                    body = json.dumps(
                        {"error": {"message": f"fake error {reply.status}", "type": "server_error"}}
                    ).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                include = bool((request.get("stream_options") or {}).get("include_usage"))
                frames = [
                    f"data: {json.dumps(c)}\n\n" for c in chunks(reply, include_usage=include)
                ]
                frames.append("data: [DONE]\n\n")
                for sent, text in enumerate(frames):
                    if reply.disconnect_after is not None and sent >= reply.disconnect_after:
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)  # cut inside the chunked body
                        return
                    data = text.encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that stops reading (a stopped turn, a timeout under test) is
                # expected here, not a traceback in the suite's output.
                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
