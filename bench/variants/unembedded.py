"""The semantic channel as if some files' chunks were not embedded (issue 25: build time).

Theory of operation: a test file's chunks are about half of a test-heavy repository's (networkx:
5,766 of 10,486) and of its embedding time; their vectors could be left out of the build. The
channel here is the CLI's ``MatrixVectorChannel`` over the index's vectors minus the rows of files
whose kind (``oya.core.kinds.file_kind``) is one of ``kinds``: exactly the ranking a build that
never embedded them would give, measured from kept indexes without a rebuild
(``bench/eval_quality.py`` ablation "test files not embedded"; the issue sets with
``/work``-side rank-only runs logged in docs/DECISIONS.md).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from oya.core.kinds import file_kind
from oya.store.backends import MatrixVectorChannel
from oya.store.index import Index


def vectors_without(index: Index, kinds: Collection[str]) -> MatrixVectorChannel:
    """The index's semantic channel over the chunks of files whose kind is not in ``kinds``."""
    channel = MatrixVectorChannel(index)
    channel._load()
    assert channel._matrix is not None and channel._ids is not None
    paths = index.chunk_paths()
    keep = np.array([file_kind(paths.get(i, "")) not in kinds for i in channel._ids], dtype=bool)
    channel._ids = [i for i, k in zip(channel._ids, keep, strict=True) if k]
    channel._matrix = channel._matrix[keep] if len(keep) else channel._matrix
    return channel
