"""Media on a real S3 API server (moto's, started once per test session by
tests/object_store.py): each test gets a fresh bucket, and the settings point STORAGES at it
exactly as the operator's S3_* variables would (config/object_storage.py)."""

import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from config.object_storage import media_storage
from tests.object_store import bucket_create, bucket_keys, running_s3_server, s3_client, s3_env
from tests.operations.test_backup import target  # noqa: F401 (an empty database fixture)


@pytest.fixture(scope="session")
def s3_endpoint():
    with running_s3_server() as endpoint:
        yield endpoint


@dataclass
class Bucket:
    endpoint: str
    name: str
    prefix: str
    media_root: Path  # the local MEDIA_ROOT, which must stay empty

    def names(self, under: str = "") -> list[str]:
        """The keys under the media prefix, without it."""
        start = f"{self.prefix}/" if self.prefix else ""
        return [key[len(start) :] for key in bucket_keys(self.endpoint, self.name, start + under)]

    def get(self, name: str) -> bytes:
        key = f"{self.prefix}/{name}" if self.prefix else name
        return s3_client(self.endpoint).get_object(Bucket=self.name, Key=key)["Body"].read()

    def put(self, name: str, data: bytes) -> None:
        key = f"{self.prefix}/{name}" if self.prefix else name
        s3_client(self.endpoint).put_object(Bucket=self.name, Key=key, Body=data)

    def local_files(self) -> list[Path]:
        return sorted(p for p in self.media_root.rglob("*") if p.is_file())


def point_at(settings, endpoint: str, bucket: str, prefix: str) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "default": media_storage(s3_env(endpoint, bucket, prefix)),
    }


@pytest.fixture
def s3_media(settings, s3_endpoint, _media_in_tmp) -> Bucket:
    """Media of this test in a fresh bucket (under a prefix, as S3_PREFIX would put it)."""
    name = f"media-{uuid.uuid4().hex[:12]}"
    bucket_create(s3_endpoint, name)
    point_at(settings, s3_endpoint, name, "arbiter")
    return Bucket(s3_endpoint, name, "arbiter", Path(_media_in_tmp))


@pytest.fixture
def fresh_bucket(settings, s3_endpoint, s3_media):
    """A function that moves media to another new, empty bucket (a restore's target)."""

    def move() -> Bucket:
        name = f"restore-{uuid.uuid4().hex[:12]}"
        bucket_create(s3_endpoint, name)
        point_at(settings, s3_endpoint, name, "arbiter")
        return Bucket(s3_endpoint, name, "arbiter", s3_media.media_root)

    return move
