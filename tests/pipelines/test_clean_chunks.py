"""The secrets check scans a chunk text once across builds (``oya.chunking.clean``) and still flags
every chunk holding a secret-looking string."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oya.chunking import clean
from oya.chunking.chunks import chunk_file
from oya.chunking.clean import CACHE_FILE, chunks_with_secrets
from oya.core.records import Chunk
from oya.scanning.reader import scan_repository

CANARY = "zq8" + "Vb3xKp" + "Tn4Lw7"  # assembled, so this file holds no secret


def _chunks(repo: Path) -> list[Chunk]:
    return [c for f in scan_repository(repo).files for c in chunk_file(f, None)]


def test_clean_texts_are_remembered_and_a_secret_is_always_found(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = _chunks(sample_repo)
    assert chunks_with_secrets(chunks, tmp_path) == []
    assert (tmp_path / CACHE_FILE).is_file()

    scanned: list[str] = []
    real = clean.find_secrets
    monkeypatch.setattr(clean, "find_secrets", lambda text, lang: scanned.append(text) or real(text, lang))
    assert chunks_with_secrets(chunks, tmp_path) == [] and scanned == []  # all known clean

    # the same chunk (path, id, content hash) with a secret in its text: keyed by text, so scanned
    leaky = replace(chunks[0], text=chunks[0].text + f'\nAPI_TOKEN = "{CANARY}"\n')
    assert chunks_with_secrets([leaky, *chunks[1:]], tmp_path) == [leaky.path]
    assert scanned == [leaky.text]
    assert chunks_with_secrets([leaky], tmp_path) == [leaky.path]  # never remembered as clean


def test_a_record_made_by_other_code_is_not_used(
    sample_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = _chunks(sample_repo)
    chunks_with_secrets(chunks, tmp_path)
    monkeypatch.setattr(clean, "CODE_KEY", "other code")
    scanned: list[str] = []
    real = clean.find_secrets
    monkeypatch.setattr(clean, "find_secrets", lambda text, lang: scanned.append(text) or real(text, lang))
    chunks_with_secrets(chunks, tmp_path)
    assert len(scanned) == len(chunks)


def test_a_token_in_a_chunks_path_is_flagged_even_when_its_text_is_known_clean(
    sample_repo: Path, tmp_path: Path
) -> None:
    chunks = _chunks(sample_repo)
    assert chunks_with_secrets(chunks, tmp_path) == []  # every text now known clean
    token_path = "keys/" + "gh" + "p_" + "Zq9" * 12 + ".py"  # a GitHub token shape, assembled
    named = replace(chunks[0], path=token_path)
    assert chunks_with_secrets([named, *chunks[1:]], tmp_path) == [token_path]
