#!/usr/bin/env python3
"""A tiny Kubernetes API server for the tests.

Serves one Pod (a JSON file) at /api/v1/namespaces/<ns>/pods/<name>, and Status bodies for
everything else: 403 for the namespace "forbidden", 404 for other pods. With --cert, --key and
--client-ca it speaks HTTPS and answers 401 without a valid bearer token (--token) or client
certificate; without them, plain HTTP to anyone. With --log, each request's path is appended
to that file. Prints its port on stdout once it listens.
"""
import argparse
import http.server
import json
import ssl


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--client-ca")
    parser.add_argument("--token")
    parser.add_argument("--pod", required=True)
    parser.add_argument("--log")
    args = parser.parse_args()
    tls = args.cert is not None

    with open(args.pod, "rb") as f:
        pod_body = f.read()
    metadata = json.loads(pod_body)["metadata"]
    pod_path = "/api/v1/namespaces/{}/pods/{}".format(metadata["namespace"], metadata["name"])

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def reply(self, code, body):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def status(self, code, reason, message):
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": message, "reason": reason, "code": code}
            self.reply(code, json.dumps(body).encode())

        def do_GET(self):
            if args.log:
                with open(args.log, "a") as log:
                    log.write(self.path + "\n")
            if tls:
                token_ok = self.headers.get("Authorization") == "Bearer " + str(args.token)
                if not token_ok and not self.connection.getpeercert():
                    return self.status(401, "Unauthorized", "Unauthorized")
            if self.path == pod_path:
                return self.reply(200, pod_body)
            parts = self.path.split("/")
            if len(parts) == 7 and parts[1:4] == ["api", "v1", "namespaces"] and parts[5] == "pods":
                if parts[4] == "forbidden":
                    return self.status(403, "Forbidden",
                                       'pods "{}" is forbidden: User "system:node:worker-2" cannot get '
                                       'resource "pods" in API group "" in the namespace "forbidden"'
                                       .format(parts[6]))
                return self.status(404, "NotFound", 'pods "{}" not found'.format(parts[6]))
            return self.status(404, "NotFound", "the server could not find the requested resource")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        context.load_verify_locations(args.client_ca)
        context.verify_mode = ssl.CERT_OPTIONAL
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
