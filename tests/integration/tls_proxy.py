#!/usr/bin/python3
"""A TLS front for a plain HTTP server, for tests: serves TLS on a free loopback port (printed
on stdout), optionally requiring a client certificate signed by --client-ca, and passes the
bytes of each connection to and from --upstream host:port. Stops on SIGTERM."""
import argparse
import signal
import socket
import ssl
import sys
import threading


def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client, context, upstream):
    try:
        tls = context.wrap_socket(client, server_side=True)
    except (ssl.SSLError, OSError) as e:
        print(f"handshake refused: {e}", file=sys.stderr, flush=True)
        client.close()
        return
    try:
        backend = socket.create_connection(upstream)
    except OSError as e:
        print(f"upstream: {e}", file=sys.stderr, flush=True)
        tls.close()
        return
    back = threading.Thread(target=pump, args=(backend, tls), daemon=True)
    back.start()
    pump(tls, backend)
    back.join()
    tls.close()
    backend.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--client-ca")
    parser.add_argument("--upstream", required=True, help="host:port of the plain server")
    args = parser.parse_args()
    host, port = args.upstream.rsplit(":", 1)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    if args.client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(args.client_ca)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, context, (host, int(port))),
                         daemon=True).start()


if __name__ == "__main__":
    main()
