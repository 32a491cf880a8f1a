"""A cloud provider on 127.0.0.1 for the window test: OpenAI's chat-completions wire format,
streaming (SSE) and whole, answering with the text of the last user message (so a masked
placeholder comes back and the app must restore it). Every request body is kept in `received`."""
import json, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Loopback:
    def __init__(self, key):
        self.key, self.received = key, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.headers.get("Authorization") != f"Bearer {outer.key}":
                    return self._send(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
                outer.received.append(body)
                text = next((m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")
                text = text if isinstance(text, str) else json.dumps(text)
                words = text.split(" ")
                usage = {"prompt_tokens": len(text) // 4, "completion_tokens": len(words), "total_tokens": len(text) // 4 + len(words)}
                if not body.get("stream"):
                    return self._send(200, {"id": "lb", "object": "chat.completion", "model": body.get("model"),
                                            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                                            "usage": usage})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                def event(obj):
                    self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
                    self.wfile.flush()
                for i, w in enumerate(words):
                    event({"id": "lb", "object": "chat.completion.chunk", "model": body.get("model"),
                           "choices": [{"index": 0, "delta": {"content": (" " if i else "") + w}, "finish_reason": None}]})
                event({"id": "lb", "object": "chat.completion.chunk", "model": body.get("model"),
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _send(self, status, obj):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
