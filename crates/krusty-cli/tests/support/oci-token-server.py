"""Token service for a docker-registry in token auth mode, for tests: on
127.0.0.1 and the port given (0: any free one), it answers GET /token
(Docker's token protocol) with a JWT signed RS256 by KEY, carrying CERT in
its x5c header (the registry's rootcertbundle holds CERT), granting the
scope asked for. Only USER:PASSWORD in basic auth gets a token; anything
else gets 401. Prints its port on its first line once listening; stops
when its stdin closes. Signs with the openssl command.

usage: oci-token-server.py PORT KEY CERT SERVICE USER PASSWORD
"""
import base64, http.server, json, subprocess, sys, threading, time, urllib.parse

PORT, KEY, CERT, SERVICE, USER, PASSWORD = sys.argv[1:7]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cert_der_b64():
    der = subprocess.run(
        ["openssl", "x509", "-in", CERT, "-outform", "DER"],
        check=True, stdout=subprocess.PIPE,
    ).stdout
    return base64.b64encode(der).decode()


X5C = cert_der_b64()


def token(scope):
    access = []
    for item in scope:
        kind, _, rest = item.partition(":")
        name, _, actions = rest.rpartition(":")
        access.append({"type": kind, "name": name, "actions": actions.split(",")})
    now = int(time.time())
    header = {"alg": "RS256", "typ": "JWT", "x5c": [X5C]}
    claims = {
        "iss": "krusty-test-issuer", "sub": USER, "aud": SERVICE,
        "exp": now + 600, "nbf": now - 60, "iat": now,
        "jti": str(now) + str(threading.get_ident()), "access": access,
    }
    signing_input = (b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())).encode()
    signature = subprocess.run(
        ["openssl", "dgst", "-sha256", "-sign", KEY],
        input=signing_input, check=True, stdout=subprocess.PIPE,
    ).stdout
    return signing_input.decode() + "." + b64url(signature)


class Tokens(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if url.path != "/token" or self.headers.get("Authorization") != expected:
            self.answer(401, {"errors": [{"code": "UNAUTHORIZED"}]})
            return
        self.answer(200, {"token": token(query.get("scope", [])), "expires_in": 600})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(PORT)), Tokens)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
