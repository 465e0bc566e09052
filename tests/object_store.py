"""A real S3 API server for tests: moto's standalone server started as a subprocess on a
free local port (no mock of boto3), and the S3_* environment that points Arbiter at it.

    with running_s3_server() as endpoint:
        bucket_create(endpoint, "media")
        env = s3_env(endpoint, "media")  # S3_BUCKET, S3_ENDPOINT_URL, ... for a subprocess
"""

import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from tests.waiting import wait_until

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"
START_SECONDS = 30


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP answer: the server is up
    except OSError:
        return False


@contextmanager
def running_s3_server() -> Iterator[str]:
    """Start `python -m moto.server` on 127.0.0.1 and a free port; yield its endpoint URL
    (http://127.0.0.1:<port>) once it answers; stop it after."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: _answers(endpoint),
            START_SECONDS,
            "moto's S3 server to answer",
            every=0.05,
            hopeless=lambda: server.poll() is not None and f"it exited with {server.returncode}",
        )
        yield endpoint
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def s3_env(endpoint: str, bucket: str, prefix: str = "") -> dict[str, str]:
    """The operator-set variables (config/object_storage.py) for this server and bucket."""
    return {
        "S3_BUCKET": bucket,
        "S3_ENDPOINT_URL": endpoint,
        "S3_REGION": REGION,
        "S3_ACCESS_KEY_ID": ACCESS_KEY,
        "S3_SECRET_ACCESS_KEY": SECRET_KEY,
        "S3_PREFIX": prefix,
    }


def s3_client(endpoint: str):
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


def bucket_create(endpoint: str, bucket: str) -> None:
    s3_client(endpoint).create_bucket(Bucket=bucket)


def bucket_keys(endpoint: str, bucket: str, prefix: str = "") -> list[str]:
    """Every key in the bucket under `prefix`, sorted."""
    pages = (
        s3_client(endpoint).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    )
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))
