"""The operator's S3_* variables choose the media storage, in the embedded and production
settings alike; without S3_BUCKET media stays on the local disk. Each case is a new process,
as a web node or worker would start."""

import pytest

from tests.deploy.test_settings import _production_env, _run
from tests.object_store import bucket_create, bucket_keys, s3_env

_ROUND_TRIP = (
    "import django; django.setup(); from django.conf import settings; "
    "from core.media_store import media_store; store = media_store(); "
    "print(settings.STORAGES['default']['BACKEND'], store.kind); "
    "store.put_bytes('assets/ab/x.png', b'node one'); print(store.read('assets/ab/x.png'))"
)


def test_with_s3_bucket_set_a_production_node_keeps_media_in_the_bucket(tmp_path, s3_endpoint):
    bucket_create(s3_endpoint, "prod-media")
    env = _production_env(tmp_path, **s3_env(s3_endpoint, "prod-media", prefix="arbiter"))
    result = _run(["-c", _ROUND_TRIP], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == [
        "storages.backends.s3.S3Storage s3",
        "b'node one'",
    ]
    assert bucket_keys(s3_endpoint, "prod-media") == ["arbiter/assets/ab/x.png"]
    assert not (tmp_path / "var" / "media").exists()  # the embedded MEDIA_ROOT


def test_without_s3_bucket_media_stays_on_the_local_disk(tmp_path):
    env = _production_env(tmp_path, MEDIA_ROOT=str(tmp_path / "media"))
    env = {name: value for name, value in env.items() if not name.startswith("S3_")}
    result = _run(["-c", _ROUND_TRIP], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("django.core.files.storage.FileSystemStorage local")
    assert (tmp_path / "media" / "assets" / "ab" / "x.png").read_bytes() == b"node one"


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"S3_ACCESS_KEY_ID": ""}, "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY"),
        ({"S3_ENDPOINT_URL": "minio:9000"}, "S3_ENDPOINT_URL"),
    ],
)
def test_a_half_configured_store_stops_the_process_naming_the_variable(tmp_path, values, named):
    env = _production_env(tmp_path, **{**s3_env("http://127.0.0.1:9", "media"), **values})
    result = _run(["manage.py", "check"], env)
    assert result.returncode != 0
    assert named in result.stderr
    assert "testing" not in result.stderr  # no key in the message
