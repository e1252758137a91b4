#!/usr/bin/env python3
"""A plain-HTTP stand-in for the API server: serves one Pod (a JSON file) at
/api/v1/namespaces/<ns>/pods/<name>, 404 for anything else, appends each request's path to a
log file, and prints its port once it listens."""
import http.server
import json
import sys


def main():
    pod_file, log_file = sys.argv[1], sys.argv[2]
    with open(pod_file, "rb") as f:
        body = f.read()
    metadata = json.loads(body)["metadata"]
    path = "/api/v1/namespaces/{}/pods/{}".format(metadata["namespace"], metadata["name"])

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_GET(self):
            with open(log_file, "a") as log:
                log.write(self.path + "\n")
            code, reply = (200, body) if self.path == path else (404, b'{"kind":"Status"}')
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
