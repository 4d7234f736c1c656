"""A git repository served over smart HTTP on 127.0.0.1, for Flux's source-controller.

The server is git's own `git http-backend` (the CGI program every git installation ships),
run per request by a small HTTP front end: the same protocol GitHub speaks, with no
authentication. Tests commit the rendered tree to the work tree and push nothing: the served
repository is the work tree's own `.git`, exported read-only.
"""

from __future__ import annotations

import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class GitServer:
    def __init__(self, root: Path):
        """Serve every repository under `root` (a folder of work trees)."""
        self.root = root
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def url(self, repo: str) -> str:
        return f"http://127.0.0.1:{self.port}/{repo}"

    def start(self) -> GitServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self):
        root = self.root

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return

            def do_GET(self) -> None:
                self._cgi()

            def do_POST(self) -> None:
                self._cgi()

            def _cgi(self) -> None:
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_PROJECT_ROOT": str(root),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "PATH_INFO": path,
                    "QUERY_STRING": query,
                    "REQUEST_METHOD": self.command,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(body)),
                    "REMOTE_ADDR": "127.0.0.1",
                    "HTTP_GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                }
                if self.headers.get("Content-Encoding"):
                    env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
                result = subprocess.run(
                    ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=120
                )
                head, _, payload = result.stdout.partition(b"\r\n\r\n")
                if not payload and b"\n\n" in result.stdout:
                    head, _, payload = result.stdout.partition(b"\n\n")
                status = 200
                headers = []
                for line in head.decode("latin-1").splitlines():
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name.strip(), value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "kubetrain e2e",
        "GIT_AUTHOR_EMAIL": "e2e@kubetrain.invalid",
        "GIT_COMMITTER_NAME": "kubetrain e2e",
        "GIT_COMMITTER_EMAIL": "e2e@kubetrain.invalid",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Commit every change of the work tree (removals too); the new revision."""
    if not (repo / ".git").exists():
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "http.receivepack", "false")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    git(repo, "update-server-info")
    return git(repo, "rev-parse", "HEAD")
