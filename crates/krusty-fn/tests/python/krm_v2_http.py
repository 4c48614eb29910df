#!/usr/bin/env python3
"""A KRM function (specification v2, HTTP) written with the standard library
only, without krusty-fn: it sets the labels of its functionConfig's `labels`
field (or, for a ConfigMap config, its `data`) on every item.

    krm_v2_http.py --http-addr 127.0.0.1:0
    krm_v2_http.py --http-addr unix:///run/fn/http.sock
    KRM_FUNCTION_HTTP_ADDRESS=unix:///run/fn/http.sock krm_v2_http.py

It follows docs/function-servers.md: POST only; Content-Type text/yaml or
application/json; Accept text/yaml, application/json, */* or none. Bodies
are read as JSON (JSON is YAML; PyYAML is used for other YAML when it is
installed) and answered as JSON, which is also valid text/yaml. A config
without labels gets an error result and status 422. SIGTERM or SIGINT stops
the server after the requests under way, removing its unix socket.
"""

import http.server
import json
import os
import signal
import socketserver
import stat
import sys
import threading

try:
    import yaml  # optional: YAML bodies that are not JSON
except ImportError:  # pragma: no cover - depends on the machine
    yaml = None

MEDIA_TYPES = {"text/yaml": "text/yaml", "application/json": "application/json", "*/*": "text/yaml"}


def media_type(value):
    return value.split(";", 1)[0].strip().lower()


def accepted(header):
    """The answer's media type for an Accept header, or None (406)."""
    if not header or not header.strip():
        return "text/yaml"
    best = None
    for part in header.split(","):
        answer = MEDIA_TYPES.get(media_type(part))
        if answer is None:
            continue
        quality = 1.0
        for param in part.split(";")[1:]:
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    pass
        if quality > 0 and (best is None or quality > best[0]):
            best = (quality, answer)
    return best[1] if best else None


def parse(body):
    text = body.decode("utf-8")
    try:
        return json.loads(text)
    except ValueError as json_error:
        if yaml is None:
            raise ValueError(f"not JSON (this function reads YAML only as JSON): {json_error}")
        return yaml.safe_load(text)


def set_labels(resource_list):
    """The function itself: returns True when it failed."""
    config = resource_list.get("functionConfig") or {}
    labels = config.get("data") if config.get("kind") == "ConfigMap" else config.get("labels")
    if not labels:
        resource_list.setdefault("results", []).append(
            {"message": "functionConfig has no labels", "severity": "error"}
        )
        return True
    for item in resource_list.get("items") or []:
        item.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    return False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # a unix socket has no client address; requests are not logged

    def reply(self, status, body, content_type="text/plain; charset=utf-8", headers=()):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def not_allowed(self):
        self.read_body()  # unread, it would reset the connection before the answer
        self.reply(405, f"method {self.command} is not allowed: POST a ResourceList\n",
                   headers=[("Allow", "POST")])

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = not_allowed

    def do_POST(self):
        body = self.read_body()
        given = self.headers.get("Content-Type") or ""
        if media_type(given) not in ("text/yaml", "application/json"):
            return self.reply(415, f"Content-Type must be text/yaml or application/json, not {given!r}\n")
        answer_type = accepted(", ".join(self.headers.get_all("Accept") or []))
        if answer_type is None:
            return self.reply(406, "Accept must allow text/yaml, application/json or */*\n")
        try:
            resource_list = parse(body)
            if not isinstance(resource_list, dict) or resource_list.get("kind") != "ResourceList":
                raise ValueError("expected kind ResourceList")
        except Exception as e:  # noqa: BLE001 - JSON, YAML or UTF-8: all are the client's
            return self.reply(400, f"reading the input ResourceList: {e}\n")
        failed = set_labels(resource_list)
        self.reply(422 if failed else 200, json.dumps(resource_list), content_type=answer_type)


class TcpServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = False  # server_close waits for the requests under way


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = False


def listen(address):
    """A server on `host:port` or `unix:///path`, and the socket file to remove."""
    if address.startswith("unix:"):
        path = address[len("unix:"):]
        path = path[2:] if path.startswith("//") else path
        if os.path.exists(path) and stat.S_ISSOCK(os.lstat(path).st_mode):
            os.remove(path)
        # Bound under another name, opened to every uid, then renamed: the
        # path appears only once a client can connect.
        binding = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.binding")
        server = UnixServer(binding, Handler)
        os.chmod(binding, 0o666)
        os.rename(binding, path)
        return server, path, address
    host, _, port = address.rpartition(":")
    server = TcpServer((host or "0.0.0.0", int(port)), Handler)
    bound_host, bound_port = server.server_address[:2]
    return server, None, f"{bound_host}:{bound_port}"


def main(argv):
    address = os.environ.get("KRM_FUNCTION_HTTP_ADDRESS", "")
    args = iter(argv[1:])
    for arg in args:
        if arg == "--http-addr":
            address = next(args, "")
        elif arg.startswith("--http-addr="):
            address = arg.split("=", 1)[1]
        else:
            print(f"unknown argument {arg!r}", file=sys.stderr)
            return 2
    if not address:
        print("give --http-addr ADDR (host:port or unix:///path)", file=sys.stderr)
        return 2
    server, socket_path, described = listen(address)

    def stop(_signum, _frame):
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"serving HTTP on {described}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        if socket_path and os.path.exists(socket_path):
            os.remove(socket_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
