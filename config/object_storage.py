"""Where media (images, cleaned copies, import uploads, export zips) is kept: the local disk
under MEDIA_ROOT (the embedded default), or an S3-compatible object store when the operator
sets S3_BUCKET. Only these operator-set names are read: S3_BUCKET, S3_ENDPOINT_URL (empty for
AWS), S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_PREFIX.

Nothing is public: objects are written without an ACL (so the bucket's own, private, rules
apply; a bucket with ACLs disabled refuses any other) and reach users only through Arbiter
after its scope checks (core/media_store.py); the keys never leave the settings.
"""

from collections.abc import Mapping

from config.env import EnvError

LOCAL_STORAGE = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
S3_BACKEND = "storages.backends.s3.S3Storage"


def media_storage(environ: Mapping[str, str]) -> dict[str, object]:
    """The STORAGES["default"] entry the environment asks for."""

    def value(name: str, default: str = "") -> str:
        return (environ.get(name) or default).strip()

    bucket = value("S3_BUCKET")
    if not bucket:
        return dict(LOCAL_STORAGE)
    access_key, secret_key = value("S3_ACCESS_KEY_ID"), value("S3_SECRET_ACCESS_KEY")
    if bool(access_key) != bool(secret_key):
        # Half a key pair would silently fall back to boto3's own credential chain.
        raise EnvError("set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or neither")
    endpoint = value("S3_ENDPOINT_URL")
    if endpoint and not endpoint.startswith(("http://", "https://")):
        raise EnvError(f"S3_ENDPOINT_URL={endpoint!r} must start with http:// or https://")
    options = {
        "bucket_name": bucket,
        "endpoint_url": endpoint or None,
        "region_name": value("S3_REGION", "us-east-1"),
        "access_key": access_key or None,
        "secret_key": secret_key or None,
        "location": value("S3_PREFIX").strip("/"),
        "default_acl": None,  # no ACL sent: the bucket's private default applies
        "querystring_auth": True,  # any URL made is signed and short-lived
        "querystring_expire": 300,
        "file_overwrite": True,  # names are content hashes or job folders: same name, same file
        "signature_version": "s3v4",
        # A self-hosted store (MinIO, moto) answers on its host name, not per-bucket ones.
        "addressing_style": "path" if endpoint else None,
    }
    return {"BACKEND": S3_BACKEND, "OPTIONS": options}
