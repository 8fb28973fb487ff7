"""A real S3-compatible server on the loopback address (moto's server mode, a separate process),
for the tests of URL inputs and outputs and for ``benchmarks/remote_bench.py``.

The server starts without authentication, so that a user and its access key can be made; then
:meth:`S3Server.require_auth` turns signature checking on, and a wrong key is refused as AWS
refuses it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class S3Server:
    """``moto_server`` on 127.0.0.1; :attr:`key` and :attr:`secret` are a real user's access key
    once :meth:`make_user` has run."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.key = "testing-key"
        self.secret = "testing-secret"
        self.process: subprocess.Popen | None = None

    def start(self) -> "S3Server":
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("moto_server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def client(self, service: str = "s3", key: str | None = None, secret: str | None = None) -> Any:
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=key or self.key,
            aws_secret_access_key=secret or self.secret,
        )

    def make_user(self, name: str = "simdedup", denied: str | None = None) -> tuple[str, str]:
        """A user allowed everything (but reading the objects ``denied`` matches: an ARN pattern),
        and its access key; the first becomes :attr:`key` and :attr:`secret`."""
        statements = [{"Effect": "Allow", "Action": "*", "Resource": "*"}]
        if denied is not None:
            statements.append({"Effect": "Deny", "Action": "s3:GetObject", "Resource": denied})
        iam = self.client("iam")
        iam.create_user(UserName=name)
        iam.put_user_policy(
            UserName=name,
            PolicyName="all",
            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}),
        )
        access = iam.create_access_key(UserName=name)["AccessKey"]
        if name == "simdedup":
            self.key, self.secret = access["AccessKeyId"], access["SecretAccessKey"]
        return access["AccessKeyId"], access["SecretAccessKey"]

    def require_auth(self) -> None:
        """From now on every request must be signed with an existing key."""
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
        )
        urllib.request.urlopen(request, timeout=10).close()

    def upload_tree(self, bucket: str, prefix: str, root: Path) -> None:
        """Every file under ``root`` as ``s3://bucket/prefix/RELATIVE``, uploaded concurrently."""
        from concurrent.futures import ThreadPoolExecutor

        s3 = self.client()
        files = [p for p in sorted(root.rglob("*")) if p.is_file()]
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda p: s3.put_object(
                        Bucket=bucket, Key=f"{prefix}/{p.relative_to(root).as_posix()}", Body=p.read_bytes()
                    ),
                    files,
                )
            )
