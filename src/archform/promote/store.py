"""The object store side of a promotion: upload, read back, re-hash (boto3, S3 API)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.promote.manifest import MANIFEST_NAME, SUMS_NAME, ModelManifest, listing
from archform.spec import UsageError
from archform.spec.release import Release, parse_release

_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Store:
    """One bucket, reached through a boto3 S3 client."""

    client: Any
    bucket: str

    def uri(self, key: str) -> str:
        """s3:// URI of a key."""
        return f"s3://{self.bucket}/{key}"


def connect(bucket: str, region: str, endpoint_url: str | None = None) -> Store:
    """A client for the registry.

    Credentials and AWS_ENDPOINT_URL come from the usual boto3 chain (environment,
    profile, instance role).
    """
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]

    client = boto3.client(
        "s3",
        region_name=region,
        endpoint_url=endpoint_url or None,
        config=Config(
            retries={"max_attempts": 8, "mode": "standard"}, connect_timeout=10, read_timeout=60
        ),
    )
    return Store(client, bucket)


@contextlib.contextmanager
def registry_errors(bucket: str, endpoint_url: str | None) -> Iterator[None]:
    """Registry failures the user can fix (credentials, endpoint, bucket) as exit-2 errors."""
    from botocore.exceptions import (  # type: ignore[import-untyped]
        BotoCoreError,
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )

    where = endpoint_url or "AWS S3"
    try:
        yield
    except (NoCredentialsError, PartialCredentialsError):
        raise UsageError(
            f"s3://{bucket}: no AWS credentials found; nothing was uploaded",
            "set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run where an "
            "instance role applies",
        ) from None
    except EndpointConnectionError as exc:
        raise UsageError(
            f"cannot reach the registry at {getattr(exc, 'kwargs', {}).get('endpoint_url', where)}"
            "; nothing was uploaded",
            "check --endpoint-url / AWS_ENDPOINT_URL and the network",
        ) from None
    except ClientError as exc:
        error = (getattr(exc, "response", None) or {}).get("Error", {})
        code = str(error.get("Code", ""))
        if code == "NoSuchBucket":
            raise UsageError(
                f"s3://{bucket}: the registry bucket does not exist at {where}",
                "create it (the generated Pulumi registry program does), or fix `bucket` in "
                "promote.json",
            ) from None
        if code in {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403"}:
            raise UsageError(
                f"s3://{bucket}: access denied ({code})",
                "use credentials allowed to write the registry bucket",
            ) from None
        raise UsageError(
            f"s3://{bucket}: the registry refused the request: {code or 'error'} "
            f"({error.get('Message', exc)})",
            "check the bucket, region and credentials",
        ) from None
    except BotoCoreError as exc:
        raise UsageError(
            f"registry at {where}: {exc}", "check the endpoint, region and credentials"
        ) from None


def _missing(exc: Exception) -> bool:
    response = getattr(exc, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    return code in {"NoSuchKey", "404", "NotFound"}


class CorruptManifestError(ValueError):
    """The stored manifest.json is not a valid archform model manifest."""


def read_manifest(store: Store, prefix: str) -> ModelManifest | None:
    """The version's stored manifest, or None when the version does not exist."""
    from botocore.exceptions import ClientError

    try:
        body = store.client.get_object(Bucket=store.bucket, Key=prefix + MANIFEST_NAME)["Body"]
    except ClientError as exc:
        if _missing(exc):
            return None
        raise
    try:
        return ModelManifest.from_json(body.read())
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptManifestError(f"{store.uri(prefix + MANIFEST_NAME)}: {exc}") from None


def upload(store: Store, prefix: str, checkpoint: Path, manifest: ModelManifest) -> None:
    """Upload every file, then SHA256SUMS, then the manifest (it marks a complete version)."""
    for entry in manifest.files:
        store.client.upload_file(
            str(checkpoint / entry.path),
            store.bucket,
            prefix + entry.path,
            ExtraArgs={"Metadata": {"sha256": entry.sha256}},
        )
    store.client.put_object(
        Bucket=store.bucket,
        Key=prefix + SUMS_NAME,
        Body=listing(manifest.files),
        ContentType="text/plain",
    )
    store.client.put_object(
        Bucket=store.bucket,
        Key=prefix + MANIFEST_NAME,
        Body=manifest.to_json(),
        ContentType="application/json",
    )


def _hash_object(store: Store, key: str) -> tuple[int, str]:
    body = store.client.get_object(Bucket=store.bucket, Key=key)["Body"]
    digest = hashlib.sha256()
    size = 0
    for chunk in body.iter_chunks(_CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return size, digest.hexdigest()


def verify(store: Store, prefix: str, manifest: ModelManifest) -> list[str]:
    """Read every object back and re-hash it; the problems found (empty when all match)."""
    from botocore.exceptions import ClientError

    problems: list[str] = []
    try:
        stored = read_manifest(store, prefix)
    except CorruptManifestError as exc:
        problems.append(f"{exc} (not a valid manifest)")
        stored = manifest
    if stored is None:
        problems.append(f"{store.uri(prefix + MANIFEST_NAME)}: missing")
    elif stored.checksum != manifest.checksum:
        problems.append(
            f"{store.uri(prefix + MANIFEST_NAME)}: checksum {stored.checksum}, "
            f"expected {manifest.checksum}"
        )
    try:
        sums = store.client.get_object(Bucket=store.bucket, Key=prefix + SUMS_NAME)["Body"].read()
    except ClientError as exc:
        if not _missing(exc):
            raise
        problems.append(f"{store.uri(prefix + SUMS_NAME)}: missing")
    else:
        if sums != listing(manifest.files):
            problems.append(f"{store.uri(prefix + SUMS_NAME)}: does not list the manifest's files")
    for entry in manifest.files:
        key = prefix + entry.path
        try:
            size, digest = _hash_object(store, key)
        except ClientError as exc:
            if not _missing(exc):
                raise
            problems.append(f"{store.uri(key)}: missing")
            continue
        if (size, digest) != (entry.size, entry.sha256):
            problems.append(
                f"{store.uri(key)}: sha256 {digest} ({size} bytes), "
                f"expected {entry.sha256} ({entry.size} bytes)"
            )
    return problems


@dataclass(frozen=True, slots=True)
class Pointer:
    """The fleet's release pointer as read: the release (None: no object) and its ETag."""

    release: Release | None
    etag: str | None
    raw: bytes = b""


class PointerMovedError(Exception):
    """The pointer changed between reading it and writing it (another promotion)."""


def read_pointer(store: Store, key: str) -> Pointer:
    """The release pointer at `key` (a UsageError when it is not a valid release)."""
    from botocore.exceptions import ClientError

    try:
        found = store.client.get_object(Bucket=store.bucket, Key=key)
    except ClientError as exc:
        if _missing(exc):
            return Pointer(None, None)
        raise
    raw = found["Body"].read()
    hint = (
        "inspect it; delete it (the bucket keeps the old version) and promote again to "
        "record a release"
    )
    return Pointer(parse_release(raw, store.uri(key), hint), str(found["ETag"]), raw)


def write_pointer(store: Store, key: str, release: Release, previous: Pointer) -> None:
    """Replace the pointer only if it is still `previous` (S3 conditional write).

    If-Match with the ETag read before (or If-None-Match: * when there was none): S3 answers
    412 Precondition Failed, or 409 ConditionalRequestConflict during a concurrent write,
    when another writer got there first
    (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html).
    """
    from botocore.exceptions import ClientError

    condition = {"IfMatch": previous.etag} if previous.etag else {"IfNoneMatch": "*"}
    try:
        store.client.put_object(
            Bucket=store.bucket,
            Key=key,
            Body=release.to_json(),
            ContentType="application/json",
            **condition,
        )
    except ClientError as exc:
        code = str((getattr(exc, "response", None) or {}).get("Error", {}).get("Code", ""))
        # NoSuchKey: the pointer read before was deleted meanwhile.
        if code in {"PreconditionFailed", "412", "ConditionalRequestConflict", "409"} or (
            previous.etag and _missing(exc)
        ):
            raise PointerMovedError(code) from None
        raise
