"""A scripted stand-in for the Messages API on loopback, for sessions of the real Claude Code
CLI: the first request that offers the scripted tool gets one tool_use of it, every other
request a final text. Every request body is kept, so that a test reads the tool_result
Claude Code sent back."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _events(blocks, stop_reason):
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": start}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


class FakeMessagesApi:
    """Serves on 127.0.0.1 at port (a free one by default) until stop()."""

    def __init__(self, tool_name, tool_input, port=0):
        self.tool_name, self.tool_input = tool_name, tool_input
        self.requests = []
        self._lock = threading.Lock()
        self._sent = False
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self._json({})

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with api._lock:
                    api.requests.append({"path": self.path, "body": body})
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._json({"input_tokens": 10})
                    return
                offered = [tool.get("name") for tool in body.get("tools", [])]
                with api._lock:
                    first = api.tool_name in offered and not api._sent
                    api._sent = api._sent or first
                if first:
                    blocks = [{"type": "tool_use", "id": "toolu_scripted",
                               "name": api.tool_name, "input": api.tool_input}]
                    stop = "tool_use"
                else:
                    blocks, stop = [{"type": "text", "text": "done"}], "end_turn"
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for name, data in _events(blocks, stop):
                        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                else:
                    self._json({"id": "msg_scripted", "type": "message", "role": "assistant",
                                "model": "claude-sonnet-4-5", "content": blocks,
                                "stop_reason": stop, "stop_sequence": None,
                                "usage": {"input_tokens": 10, "output_tokens": 5}})

            def _json(self, value):
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def offered_tools(self):
        """The tool names of the first request that offered any."""
        with self._lock:
            for request in self.requests:
                tools = request["body"].get("tools")
                if tools:
                    return [tool.get("name") for tool in tools]
        return []

    def tool_result(self):
        """The tool_result Claude Code sent back for the scripted call, or None."""
        with self._lock:
            for request in self.requests:
                for message in request["body"].get("messages", []):
                    content = message.get("content")
                    if not isinstance(content, list):
                        continue
                    for part in content:
                        if part.get("type") == "tool_result" and \
                                part.get("tool_use_id") == "toolu_scripted":
                            return part
        return None
