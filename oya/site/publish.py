"""Publish a built site to S3-compatible object storage so that readers never see half of it.

Theory of operation. A repository's entry may name ``publish_url = "s3://bucket/prefix"`` (and
``publish_endpoint`` for a non-AWS server; credentials come from boto3's usual chain: environment,
``~/.aws``, an instance role — never from Oya's configuration). After the local site is swapped in,
``published_site`` uploads it:

1. **Immutable version first.** Every file goes under ``<prefix>/v/<version>/`` where the version
   is the UTC time and the first 12 hex digits of a hash over the site's file list and contents.
   A file whose bytes are those of the same path in the live version (same MD5 ETag) is copied
   server-side instead of uploaded: a one-file rebuild sends its few changed pages and the bundle,
   not the 60 MB runtime.
2. **Pointer last.** ``<prefix>/current.json`` (``{"version", "root"}``) and ``<prefix>/index.html``
   (a redirect into the version) are written after every file of the version is there. One PUT
   each is atomic, so a reader either gets the previous version, whole, or the new one. A run that
   fails or is killed while uploading leaves the pointer on the previous version; its partial
   version is garbage that the next publish removes.
3. **Old versions** other than the new one and the one it replaced are deleted after the pointer
   moved (a reader who loaded a page from the replaced version keeps working while it finishes).

Pages link to each other relatively, so a version prefix is a complete site on its own.

A prefix without ``current.json`` that already holds an ``index.html`` or anything under ``v/`` was
not published by Oya (a team's own static site, say): the publish is refused before it writes, so
that page is not overwritten and those objects are not deleted as old versions.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from oya.errors import OyaError

POINTER = "current.json"
VERSIONS = "v"
_REDIRECT = (
    '<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url={root}index.html">'
    '<link rel="canonical" href="{root}index.html"><a href="{root}index.html">Open the wiki</a>\n'
)


class PublishError(OyaError):
    """The site could not be published to object storage (the previous version stays live)."""


@dataclass(frozen=True, slots=True)
class Target:
    bucket: str
    prefix: str  # "" or "a/b/" (always ends with "/")

    @classmethod
    def parse(cls, url: str) -> Target:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc:
            raise PublishError(f"publish_url must look like s3://bucket/prefix, got {url!r}")
        prefix = parts.path.strip("/")
        return cls(parts.netloc, prefix + "/" if prefix else "")


@dataclass(frozen=True, slots=True)
class Published:
    url: str
    version: str
    uploaded: int
    copied: int


def client(endpoint: str = "") -> Any:
    import boto3

    return boto3.client("s3", endpoint_url=endpoint or None)


def site_version(site: Path, files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(site).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + digest.hexdigest()[:12]


def publish_site(site: Path, url: str, s3: Any) -> Published:
    """Upload ``site`` as a new version under ``url`` and point readers at it (see the module doc)."""
    target = Target.parse(url)
    files = sorted(p for p in site.rglob("*") if p.is_file())
    version = site_version(site, files)
    root = f"{target.prefix}{VERSIONS}/{version}/"
    try:
        live = _live_version(s3, target)
        if not live:
            _refuse_foreign_prefix(s3, target, url)
        live_etags = _etags(s3, target.bucket, f"{target.prefix}{VERSIONS}/{live}/") if live else {}
        uploaded = copied = 0
        for path in files:
            rel = path.relative_to(site).as_posix()
            data = path.read_bytes()
            etag = hashlib.md5(data, usedforsecurity=False).hexdigest()
            extra = _content_type(rel)
            if live_etags.get(rel) == etag:
                source = {"Bucket": target.bucket, "Key": f"{target.prefix}{VERSIONS}/{live}/{rel}"}
                s3.copy_object(Bucket=target.bucket, Key=root + rel, CopySource=source, **extra)
                copied += 1
            else:
                s3.put_object(Bucket=target.bucket, Key=root + rel, Body=data, **extra)
                uploaded += 1
        pointer = json.dumps({"version": version, "root": f"{VERSIONS}/{version}/"}).encode()
        s3.put_object(
            Bucket=target.bucket, Key=target.prefix + POINTER, Body=pointer, ContentType="application/json"
        )
        page = _REDIRECT.format(root=f"{VERSIONS}/{version}/").encode()
        s3.put_object(
            Bucket=target.bucket, Key=target.prefix + "index.html", Body=page, ContentType="text/html"
        )
        _remove_old_versions(s3, target, keep={version, live})
    except Exception as exc:  # noqa: BLE001 - botocore's errors are many; one line says which step
        if isinstance(exc, PublishError):
            raise
        raise PublishError(
            f"publishing the site to {url} failed ({type(exc).__name__}: {exc}); "
            "the previous version stays live"
        ) from exc
    return Published(url=f"s3://{target.bucket}/{root}", version=version, uploaded=uploaded, copied=copied)


def _refuse_foreign_prefix(s3: Any, target: Target, url: str) -> None:
    """Raise when a prefix with no pointer holds what a publish would overwrite or delete."""
    page = target.prefix + "index.html"
    foreign = [o["Key"] for o in _keys(s3, target.bucket, page) if o["Key"] == page]
    foreign += [o["Key"] for o in _keys(s3, target.bucket, f"{target.prefix}{VERSIONS}/")[:1]]
    if foreign:
        raise PublishError(
            f"refusing to publish to {url}: it holds {foreign[0]}, which Oya did not publish (no "
            f"{POINTER}); choose another publish_url"
        )


def _content_type(rel: str) -> dict[str, str]:
    kind, _ = mimetypes.guess_type(rel)
    if rel.endswith(".gz"):  # opaque bytes the page inflates itself: no Content-Encoding
        kind = "application/gzip"
    return {"ContentType": kind or "application/octet-stream"}


def _live_version(s3: Any, target: Target) -> str:
    try:
        body = s3.get_object(Bucket=target.bucket, Key=target.prefix + POINTER)["Body"].read()
    except s3.exceptions.NoSuchKey:
        return ""
    return str(json.loads(body)["version"])


def _keys(s3: Any, bucket: str, prefix: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out += page.get("Contents", [])
    return out


def _etags(s3: Any, bucket: str, prefix: str) -> dict[str, str]:
    return {o["Key"][len(prefix) :]: o["ETag"].strip('"') for o in _keys(s3, bucket, prefix)}


def _remove_old_versions(s3: Any, target: Target, keep: set[str]) -> None:
    base = f"{target.prefix}{VERSIONS}/"
    stale = [
        o["Key"] for o in _keys(s3, target.bucket, base) if o["Key"][len(base) :].split("/", 1)[0] not in keep
    ]
    for i in range(0, len(stale), 1000):  # DeleteObjects takes at most 1,000 keys
        s3.delete_objects(Bucket=target.bucket, Delete={"Objects": [{"Key": k} for k in stale[i : i + 1000]]})
