"""TLS (hot reload), mTLS, the probe listener, bearer tokens and their file."""

import http.client
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from fixture import WORK, Server, free_port, refused_before_a_lease, serve_refused


def make_pki(d, name):
    """A CA (`name`-ca.pem) and a certificate it signed for 127.0.0.1 (`name`.pem,
    `name`.key), made by openssl."""

    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    with open(os.path.join(d, "ca.ext"), "w") as f:
        f.write("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
    with open(os.path.join(d, "leaf.ext"), "w") as f:
        f.write(
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"
        )
    run(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-days",
        "2",
        "-subj",
        f"/CN={name}-ca",
        "-keyout",
        f"{name}-ca.key",
        "-out",
        f"{name}-ca.pem",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    run(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-subj",
        f"/CN={name}",
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.csr",
    )
    run(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        f"{name}-ca.pem",
        "-CAkey",
        f"{name}-ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
        "-out",
        f"{name}.pem",
    )
    return tuple(os.path.join(d, f) for f in (f"{name}-ca.pem", f"{name}.pem", f"{name}.key"))


@unittest.skipUnless(shutil.which("openssl"), "openssl not installed")
class Tls(unittest.TestCase):
    """TLS (hot reload), mTLS and bearer tokens, with openssl-made certificates."""

    def setUp(self):
        import ssl

        self.ssl = ssl
        self.d = tempfile.mkdtemp(dir=WORK)
        self.ca, self.cert, self.key = make_pki(self.d, "server")
        self.other_ca, self.other_cert, self.other_key = make_pki(self.d, "other")

    def mtls_server(self, *more):
        """A server with TLS that asks for a client certificate of the server's CA."""
        tls = ("--tls-cert", self.cert, "--tls-key", self.key, "--tls-client-ca", self.ca)
        return Server("--node", "1", *tls, *more)

    def https(self, s, path, ca=None, client=None, headers=None):
        ctx = self.ssl.create_default_context(cafile=ca or self.ca)
        if client:
            ctx.load_cert_chain(*client)
        c = http.client.HTTPSConnection("127.0.0.1", s.port, timeout=5, context=ctx)
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        peer = c.sock.getpeercert(binary_form=True)
        c.close()
        return r.status, body, peer

    def test_bad_files_are_refused_before_a_lease_is_taken(self):
        bad = os.path.join(self.d, "garbage.pem")
        with open(bad, "w") as f:
            f.write("not a certificate\n")
        empty = os.path.join(self.d, "empty-tokens")
        open(empty, "w").close()
        missing = os.path.join(self.d, "missing.pem")
        for args, named in [
            (["--tls-cert", bad, "--tls-key", self.key], bad),
            (["--tls-cert", self.cert, "--tls-key", bad], bad),
            (["--tls-cert", self.other_cert, "--tls-key", self.key], None),  # key of another cert
            (["--tls-cert", self.cert, "--tls-key", self.key, "--tls-client-ca", missing], missing),
            (["--auth-token-file", empty], empty),
        ]:
            err = refused_before_a_lease(self, *args)
            if named:
                self.assertIn(named, err, args)

    def test_tls_wrong_ca_and_hot_reload(self):
        s = Server("--node", "1", "--tls-cert", self.cert, "--tls-key", self.key)
        try:
            st, body, peer = self.https(s, "/v1/id")
            self.assertEqual(st, 200)
            with self.assertRaises(self.ssl.SSLCertVerificationError):
                self.https(s, "/v1/id", ca=self.other_ca)
            out = subprocess.run(
                [
                    "curl",
                    "-sS",
                    "--http2",
                    "--cacert",
                    self.ca,
                    "-w",
                    "\n%{http_version}",
                    f"https://127.0.0.1:{s.port}/v1/id",
                ],
                capture_output=True,
                text=True,
            )
            self.assertEqual(out.stdout.split("\n")[-1], "2", out.stderr)
            # Replace the certificate (same CA, new key): new connections get it.
            _, cert2, key2 = make_pki(tempfile.mkdtemp(dir=WORK), "server")
            shutil.copy(key2, self.key)
            shutil.copy(cert2, self.cert)
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:
                try:
                    st2, _, peer2 = self.https(
                        s, "/v1/id", ca=os.path.join(os.path.dirname(cert2), "server-ca.pem")
                    )
                    if peer2 != peer:
                        break
                except self.ssl.SSLError:
                    pass
                time.sleep(0.3)
            else:
                self.fail(f"the new certificate was not served: {s.logs()}")
            self.assertIn("reloaded", s.logs())
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_mtls_refuses_no_or_foreign_client_certificates(self):
        s = self.mtls_server()
        try:
            self.assertEqual(self.https(s, "/v1/id", client=(self.cert, self.key))[0], 200)
            for client in (None, (self.other_cert, self.other_key)):
                with self.assertRaises(
                    (self.ssl.SSLError, ConnectionError, http.client.HTTPException)
                ):
                    self.https(s, "/v1/id", client=client)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_probe_listener_answers_without_a_client_certificate(self):
        probe_port = free_port()
        s = self.mtls_server("--probe-listen", f"127.0.0.1:{probe_port}")
        try:
            for path, want in (
                ("/healthz", 200),
                ("/readyz", 200),
                ("/v1/id", 404),
                ("/metrics", 404),
            ):
                c = http.client.HTTPConnection("127.0.0.1", probe_port, timeout=5)
                c.request("GET", path)
                r = c.getresponse()
                r.read()
                c.close()
                self.assertEqual(r.status, want, path)
            with self.assertRaises((self.ssl.SSLError, ConnectionError, http.client.HTTPException)):
                self.https(s, "/healthz")
        finally:
            self.assertEqual(s.stop(), 0, s.logs())

    def test_metrics_behind_the_token_when_asked(self):
        tokens = os.path.join(self.d, "metrics-tokens")
        with open(tokens, "w") as f:
            f.write("scrape-token\n")
        s = Server("--node", "1", "--auth-token-file", tokens, "--metrics-auth")
        try:
            self.assertEqual(s.get("/metrics")[0], 401)
            self.assertEqual(
                s.get("/metrics", headers={"Authorization": "Bearer scrape-token"})[0], 200
            )
            self.assertEqual(s.get("/healthz")[0], 200)
        finally:
            self.assertEqual(s.stop(), 0, s.logs())
        code, err = serve_refused("--node", "1", "--metrics-auth")
        self.assertEqual(code, 2, err)
        self.assertIn("--auth-token-file", err)

    def test_bearer_tokens(self):
        tokens = os.path.join(self.d, "tokens")
        with open(tokens, "w") as f:
            f.write("# service tokens\nalpha-token\n\nbeta-token\n")
        s = Server("--node", "1", "--auth-token-file", tokens)
        try:
            self.assertEqual(s.get("/healthz")[0], 200)
            self.assertEqual(s.get("/metrics")[0], 200)
            for h in (
                {},
                {"Authorization": "Bearer wrong"},
                {"Authorization": "Basic alpha-token"},
            ):
                st, ct, body = s.get("/v1/id", headers=h)
                self.assertEqual(
                    (st, ct, json.loads(body)["error"]),
                    (401, "application/json", "unauthorized"),
                    h,
                )
            for t in ("alpha-token", "beta-token"):
                self.assertEqual(s.get("/v1/id", headers={"Authorization": f"Bearer {t}"})[0], 200)
            # gRPC: UNAUTHENTICATED (16) without a token, decided on the headers alone. The
            # request has no body: with one, the server's early answer (and its reset of
            # the stream it no longer reads) could reach curl while it was still sending,
            # and curl then printed nothing (seen once in a `make ci`).
            out = subprocess.run(
                [
                    "curl",
                    "-sS",
                    "--http2-prior-knowledge",
                    "-X",
                    "POST",
                    "-D",
                    "-",
                    "-o",
                    "/dev/null",
                    "-H",
                    "content-type: application/grpc",
                    "-H",
                    "te: trailers",
                    f"http://127.0.0.1:{s.port}/flakeid.v1.Flakeid/Next",
                ],
                capture_output=True,
            )
            self.assertIn(
                b"grpc-status: 16", out.stdout.lower(), (out.returncode, out.stderr, s.logs())
            )
        finally:
            self.assertEqual(s.stop(), 0, s.logs())


class TokenFileLines(unittest.TestCase):
    def test_a_token_listed_twice_is_refused_at_start_naming_the_file_and_lines(self):
        # x, B, B, C: with the duplicate, B's requests took C's share (places ORed).
        d = tempfile.mkdtemp(dir=WORK)
        tokens = os.path.join(d, "tokens")
        with open(tokens, "w") as f:
            f.write("x\nB\nB\nC\n")
        err = refused_before_a_lease(self, "--auth-token-file", tokens)
        self.assertIn(tokens, err)
        self.assertIn("lines 2 and 3", err)
