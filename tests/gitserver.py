"""Reusable git fixtures for kzgit tests: real repositories in temp dirs,
served over ``file://`` and over a loopback smart-HTTP server.

No test using this module touches the internet: the server binds 127.0.0.1 on
an ephemeral port and ``insteadOf`` rewriting maps public URLs onto it.

API
---
``git(*args, cwd)``
    Run git with a fixed identity and a scrubbed environment; returns stdout.
``GitRepo.create(path, files)`` / ``GitRepo``
    A non-bare repository.  ``commit(files, message) -> sha`` writes files
    (``{"rel/path": "text" | bytes | None}``; ``None`` deletes) and commits;
    ``tag(name, annotated=False)``, ``branch(name)``, ``switch(name)``,
    ``head() -> sha``, ``add_submodule(url, path)``, ``file_url(subpath="", ref="")``.
``kustomization(resources=..., **fields) -> str`` and ``configmap(name, **data) -> str``
    Small YAML helpers for repository contents.
``GitHTTPServer(git_root, raw_root=None)``
    Context manager (or ``start()``/``stop()``); ``.url`` is ``http://127.0.0.1:<port>``.
    Routes: ``/git/<path>`` smart HTTP through ``git http-backend`` (GIT_PROJECT_ROOT =
    ``git_root``; ``<path>`` may name a repo directory or its ``.git``);
    ``/site/<path>`` like a forge: git smart HTTP for git clients, an HTML page for
    any other GET; ``/raw/<path>`` files under ``raw_root``; ``/big/<n>`` an ``n``-byte body;
    ``/slow/<n>?delay=s`` ``n`` bytes, one every ``delay`` seconds;
    ``/hang/...`` never answers (until the server stops); ``/status<code>`` and
    ``/status/<code>[/...]`` answer ``<code>``;
    ``/auth/<path>`` as ``/git/`` once a request carries an Authorization header (any), a
    401 asking for basic auth before; ``/redirect?to=<url>`` a 302 and
    ``/moved/<path>`` a 302 to ``<moved-to>/<path>`` (``.moved_to``, set by the test, with
    the query kept).  ``.requests`` lists ``(method, path)`` served and
    ``.authorizations`` the ``(path, Authorization header)`` of those that carried one.
    ``GitHTTPServer(..., host="localhost")`` binds 127.0.0.1 but names itself ``localhost``
    in ``.url`` (a second origin on this machine); ``tls=(certfile, keyfile)`` serves https.
``self_signed_cert(directory) -> (certfile, keyfile)``
    A certificate for 127.0.0.1 and localhost (``openssl``); point ``SSL_CERT_FILE`` at
    ``certfile`` so that Python and git trust it.
``insteadof_env(rewrites) -> dict``
    ``GIT_CONFIG_COUNT``/``KEY``/``VALUE`` variables setting
    ``url.<new>.insteadOf=<old>`` for each ``{old: new}`` (kzgit keeps these
    variables when it scrubs ``GIT_*``).
``forbid_network(monkeypatch)``
    Make every socket connection and name lookup in this process fail unless it
    goes to 127.0.0.1/::1/localhost (kzgit GETs ``https://github.com/...`` before
    trying git, as kustomize does; in tests that GET must fail fast, offline).
``isolate(monkeypatch, tmp_path) -> str``
    Point HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME into ``tmp_path``, drop the
    user's git config, proxies and ``KZGIT_CACHE_DIR``; returns the cache root
    kzgit will use (``$XDG_CACHE_HOME/kzgit``).
"""
from __future__ import annotations

import http.server
import os
import shutil
import socketserver
import subprocess
import threading
import time
import urllib.parse
from typing import Dict, List, Mapping, Optional, Tuple, Union

FileContent = Union[str, bytes, None]

_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "kzgit test", "GIT_AUTHOR_EMAIL": "test@kzgit.invalid",
    "GIT_COMMITTER_NAME": "kzgit test", "GIT_COMMITTER_EMAIL": "test@kzgit.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


def _env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_GIT_IDENTITY)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def git(*args: str, cwd: str, timeout: float = 60) -> str:
    """Run a git command for test setup; raise CalledProcessError with its output on failure."""
    cmd = ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always",
           "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args]
    p = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd, p.stdout, p.stderr)
    return p.stdout


class GitRepo:
    """A real, non-bare git repository for tests."""

    def __init__(self, path: str) -> None:
        self.path = path

    @classmethod
    def create(cls, path: str, files: Optional[Mapping[str, FileContent]] = None,
               message: str = "initial") -> "GitRepo":
        os.makedirs(path, exist_ok=True)
        git("init", "--quiet", cwd=path)
        repo = cls(path)
        if files:
            repo.commit(files, message)
        return repo

    def write(self, files: Mapping[str, FileContent]) -> None:
        for rel, content in files.items():
            p = os.path.join(self.path, rel)
            if content is None:
                if os.path.lexists(p):
                    os.remove(p)
                continue
            os.makedirs(os.path.dirname(p), exist_ok=True)
            mode = "wb" if isinstance(content, bytes) else "w"
            with open(p, mode) as f:
                f.write(content)

    def commit(self, files: Mapping[str, FileContent], message: str = "change") -> str:
        self.write(files)
        git("add", "-A", cwd=self.path)
        git("commit", "--quiet", "--allow-empty", "-m", message, cwd=self.path)
        return self.head()

    def head(self) -> str:
        return git("rev-parse", "HEAD", cwd=self.path).strip()

    def tag(self, name: str, annotated: bool = False) -> None:
        if annotated:
            git("tag", "-a", "-m", name, name, cwd=self.path)
        else:
            git("tag", name, cwd=self.path)

    def branch(self, name: str) -> None:
        git("branch", name, cwd=self.path)

    def switch(self, name: str) -> None:
        git("checkout", "--quiet", name, cwd=self.path)

    def add_submodule(self, url: str, path: str) -> str:
        git("submodule", "--quiet", "add", url, path, cwd=self.path)
        git("commit", "--quiet", "-m", f"submodule {path}", cwd=self.path)
        return self.head()

    def file_url(self, subpath: str = "", ref: str = "") -> str:
        """``file://<repo>[//subpath][?ref=ref]`` as kustomize accepts it."""
        url = "file://" + self.path
        if subpath:
            url += "//" + subpath
        if ref:
            url += "?ref=" + ref
        return url


def kustomization(resources: Tuple[str, ...] = (), **fields: object) -> str:
    """A kustomization.yaml text: ``resources`` plus scalar top-level fields."""
    lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization"]
    for k, v in fields.items():
        lines.append(f"{k}: {v}")
    if resources:
        lines.append("resources:")
        lines += [f"- {r}" for r in resources]
    return "\n".join(lines) + "\n"


def configmap(name: str, **data: str) -> str:
    """A ConfigMap manifest text."""
    out = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
    if data:
        out += "data:\n" + "".join(f"  {k}: {v}\n" for k, v in data.items())
    return out


def insteadof_env(rewrites: Mapping[str, str]) -> Dict[str, str]:
    """Environment implementing ``git config url.<new>.insteadOf <old>`` for ``{old: new}``."""
    env = {"GIT_CONFIG_COUNT": str(len(rewrites))}
    for i, (old, new) in enumerate(rewrites.items()):
        env[f"GIT_CONFIG_KEY_{i}"] = f"url.{new}.insteadOf"
        env[f"GIT_CONFIG_VALUE_{i}"] = old
    return env


_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def forbid_network(monkeypatch: "object") -> None:
    """Refuse non-loopback connections and name lookups in this Python process."""
    import socket
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def getaddrinfo(host: object, *a: object, **k: object) -> object:
        if host not in _LOOPBACK and host is not None:
            raise socket.gaierror(socket.EAI_NONAME, f"network disabled in tests: {host!r}")
        return real_getaddrinfo(host, *a, **k)  # type: ignore[arg-type]

    def connect(self: socket.socket, address: object) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            if not (isinstance(address, tuple) and address[0] in _LOOPBACK):
                raise ConnectionRefusedError(f"network disabled in tests: {address!r}")
        real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)  # type: ignore[attr-defined]
    monkeypatch.setattr(socket.socket, "connect", connect)  # type: ignore[attr-defined]


def isolate(monkeypatch: "object", tmp_path: "os.PathLike[str]") -> str:
    """Keep git and kzgit away from the real home, config, cache and proxies."""
    mp = monkeypatch
    home = os.path.join(os.fspath(tmp_path), "home")
    os.makedirs(home, exist_ok=True)
    for k in list(os.environ):
        if k.startswith("GIT_") or k.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            mp.delenv(k, raising=False)  # type: ignore[attr-defined]
    mp.delenv("KZGIT_CACHE_DIR", raising=False)  # type: ignore[attr-defined]
    mp.setenv("HOME", home)  # type: ignore[attr-defined]
    mp.setenv("XDG_CONFIG_HOME", os.path.join(home, ".config"))  # type: ignore[attr-defined]
    mp.setenv("XDG_CACHE_HOME", os.path.join(home, ".cache"))  # type: ignore[attr-defined]
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")  # type: ignore[attr-defined]
    mp.setenv("no_proxy", "127.0.0.1,localhost")  # type: ignore[attr-defined]
    return os.path.join(home, ".cache", "kzgit")


def offline_home(monkeypatch: "object", tmp_path: "os.PathLike[str]") -> str:
    """No network but 127.0.0.1 (:func:`forbid_network`) and a temporary home
    (:func:`isolate`); returns kzgit's cache directory in that home."""
    forbid_network(monkeypatch)
    return isolate(monkeypatch, tmp_path)


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class GitHTTPServer:
    """Loopback HTTP server: git smart HTTP plus raw, big, slow, hanging and error routes."""

    def __init__(self, git_root: str, raw_root: Optional[str] = None, host: str = "127.0.0.1",
                 tls: Optional[Tuple[str, str]] = None) -> None:
        self.git_root = git_root
        self.raw_root = raw_root or git_root
        self.host = host
        self.tls = tls
        self.requests: List[Tuple[str, str]] = []
        self.authorizations: List[Tuple[str, str]] = []
        self.moved_to = ""
        self._stop = threading.Event()
        self._httpd: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    def start(self) -> "GitHTTPServer":
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                owner._route(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                owner._route(self, "POST")

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        if self.tls:
            import ssl
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*self.tls)
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "GitHTTPServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- routes ------------------------------------------------------------------------------
    def _route(self, h: http.server.BaseHTTPRequestHandler, method: str) -> None:
        self.requests.append((method, h.path))
        if h.headers.get("Authorization"):
            self.authorizations.append((h.path, h.headers["Authorization"]))
        parsed = urllib.parse.urlsplit(h.path)
        path, query = parsed.path, urllib.parse.parse_qs(parsed.query)
        try:
            if path.startswith("/git/"):
                self._git(h, method, path[len("/git"):], parsed.query)
            elif path.startswith("/auth/"):
                if h.headers.get("Authorization"):
                    self._git(h, method, path[len("/auth"):], parsed.query)
                else:
                    if method == "POST":
                        self._read_body(h)
                    self._send(h, 401, b"authenticate\n",
                               [("WWW-Authenticate", 'Basic realm="kzgit test"')])
            elif path.startswith("/site/"):
                if path.endswith(("/info/refs", "/git-upload-pack")):
                    self._git(h, method, path[len("/site"):], parsed.query)
                else:
                    self._send(h, 200, b"<!DOCTYPE html>\n<html><body>a repository</body></html>\n",
                               [("Content-Type", "text/html")])
            elif path.startswith("/raw/"):
                # percent-decoded as a web server serves files (/raw/a%23b is the file "a#b")
                f = os.path.realpath(os.path.join(self.raw_root,
                                                  urllib.parse.unquote(path[len("/raw/"):])))
                if not f.startswith(os.path.realpath(self.raw_root) + os.sep) or not os.path.isfile(f):
                    self._send(h, 404, b"not found\n")
                else:
                    with open(f, "rb") as fh:
                        self._send(h, 200, fh.read())
            elif path.startswith("/big/"):
                self._send(h, 200, b"x" * int(path[len("/big/"):]))
            elif path.startswith("/slow/"):
                n = int(path[len("/slow/"):])
                delay = float(query.get("delay", ["0.2"])[0])
                h.send_response(200)
                h.send_header("Content-Length", str(n))
                h.end_headers()
                for _ in range(n):
                    if self._stop.wait(delay):
                        return
                    h.wfile.write(b"x")
                    h.wfile.flush()
            elif path.startswith("/hang/"):
                self._stop.wait(120)
            elif path.startswith("/status"):
                code = path[len("/status"):].lstrip("/").split("/")[0]
                self._send(h, int(code), b"status\n")
            elif path.startswith("/moved/"):
                to = self.moved_to + path[len("/moved"):] + ("?" + parsed.query if parsed.query else "")
                if method == "POST":
                    self._read_body(h)
                h.send_response(302)
                h.send_header("Location", to)
                h.send_header("Content-Length", "0")
                h.end_headers()
            elif path == "/redirect":
                h.send_response(302)
                h.send_header("Location", query["to"][0])
                h.send_header("Content-Length", "0")
                h.end_headers()
            else:
                self._send(h, 404, b"no route\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    @staticmethod
    def _send(h: http.server.BaseHTTPRequestHandler, code: int, body: bytes,
              headers: Optional[List[Tuple[str, str]]] = None) -> None:
        h.send_response(code)
        for k, v in headers or []:
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    @staticmethod
    def _read_body(h: http.server.BaseHTTPRequestHandler) -> bytes:
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(h.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    h.rfile.readline()
                    return out
                out += h.rfile.read(size)
                h.rfile.readline()
        n = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(n) if n else b""

    def _git(self, h: http.server.BaseHTTPRequestHandler, method: str, path_info: str,
             query: str) -> None:
        body = self._read_body(h) if method == "POST" else b""
        env = _env()
        env.update({
            "GIT_PROJECT_ROOT": self.git_root, "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": urllib.parse.unquote(path_info), "QUERY_STRING": query,
            "REQUEST_METHOD": method, "REMOTE_ADDR": "127.0.0.1",
            "CONTENT_TYPE": h.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
        })
        if h.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = h.headers["Git-Protocol"]
        if h.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = h.headers["Content-Encoding"]
        p = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True,
                           timeout=60)
        out = p.stdout
        sep = out.find(b"\r\n\r\n")
        sep_len = 4
        if sep < 0:
            sep, sep_len = out.find(b"\n\n"), 2
        head, payload = (out[:sep], out[sep + sep_len:]) if sep >= 0 else (b"", out)
        code, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                code = int(v.strip().split()[0])
            elif k:
                headers.append((k.strip(), v.strip()))
        self._send(h, code, payload, headers)


def self_signed_cert(directory: str) -> Tuple[str, str]:
    """A self-signed certificate valid for 127.0.0.1 and localhost: ``(certfile, keyfile)``."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-keyout", key, "-out", cert,
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def copy_tree(src: str, dst: str) -> None:
    """Copy a directory tree (symlinks kept)."""
    shutil.copytree(src, dst, symlinks=True)


def wait_until(pred: "object", timeout: float = 5.0) -> bool:
    """Poll ``pred()`` until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False
