"""Smart-HTTP git server for tests: serves the bare repositories under ROOT
through `git http-backend`, on 127.0.0.1 and the port given (0: any free
one). Prints the port on its first line once listening. With CERT and KEY
it serves HTTPS. With --static it serves ROOT's files as they are instead.
With --hang it accepts connections and never answers. It stops when its
stdin closes (when the test that started it ends).

usage: git-http-server.py PORT ROOT [CERT KEY] [--static|--hang]
"""
import functools, http.server, os, ssl, subprocess, sys, threading, time, urllib.parse

args = [a for a in sys.argv[1:] if not a.startswith("--")]
flags = {a for a in sys.argv[1:] if a.startswith("--")}
PORT, ROOT = int(args[0]), os.path.abspath(args[1])


class Git(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if n == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _run(self):
        u = urllib.parse.urlsplit(self.path)
        body = self._body() if self.command == "POST" else b""
        env = dict(os.environ, GIT_PROJECT_ROOT=ROOT, GIT_HTTP_EXPORT_ALL="1",
                   REQUEST_METHOD=self.command, PATH_INFO=urllib.parse.unquote(u.path),
                   QUERY_STRING=u.query, REMOTE_ADDR=self.client_address[0],
                   CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   CONTENT_LENGTH=str(len(body)),
                   GIT_PROTOCOL=self.headers.get("Git-Protocol", ""),
                   HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""))
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, payload = out.partition(sep)
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _run

    def log_message(self, *a):
        pass


class Hang(http.server.BaseHTTPRequestHandler):
    def handle(self):
        time.sleep(3600)


class Static(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


if "--hang" in flags:
    handler = Hang
elif "--static" in flags:
    handler = functools.partial(Static, directory=ROOT)
else:
    handler = Git
srv = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), handler)
srv.daemon_threads = True
if len(args) > 3:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args[2], args[3])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
# The test that started the server holds its stdin: when it ends, so does
# the server.
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
srv.serve_forever()
