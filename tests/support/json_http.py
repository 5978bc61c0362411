"""What the suite's stand-ins for HTTP servers share: one JSON answer, with its length, on a
connection kept open (HTTP/1.1), as the clients they stand in for expect."""
import json


def answer_json(handler, status, document):
    """Sends `document` as the JSON body of a `status` response through `handler`, a
    http.server.BaseHTTPRequestHandler."""
    body = json.dumps(document).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
