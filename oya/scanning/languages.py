"""Which language Oya indexes a file as, from its name alone; and the extensions that mark a file
binary, so the reader skips it before reading a byte.

A file's extension (the text after its last dot, lower-cased; none for a leading dot as in
``.bashrc``) names its language; a few files are known by their whole name (``Makefile``,
``Dockerfile``, ``LICENSE``...). Anything else is ``None``: the reader skips it as ``unsupported``.
"""

from __future__ import annotations

BINARY_EXTS = frozenset(
    """
    png jpg jpeg gif bmp ico icns webp tif tiff psd xcf heic avif
    zip tar gz tgz bz2 xz lz lzma zst 7z rar jar war ear
    pyc pyo pyd so dylib dll exe o a lib obj class wasm whl egg
    pdf doc docx xls xlsx ppt pptx odt ods odp epub
    woff woff2 ttf otf eot
    db sqlite sqlite3 duckdb parquet arrow feather avro orc npy npz pkl pickle joblib h5 hdf5
    onnx gguf ggml bin pt pth safetensors ckpt tflite pb
    mp3 mp4 m4a wav ogg flac aac avi mov mkv webm
    iso img dmg deb rpm msi apk
    """.split()
)

_LANG_BY_EXT = {
    "py": "python",
    "pyi": "python",
    "md": "markdown",
    "markdown": "markdown",
    "rst": "rst",
    "txt": "text",
    "toml": "toml",
    "yaml": "yaml",
    "yml": "yaml",
    "json": "json",
    "ini": "ini",
    "cfg": "ini",
    "sh": "shell",
    "bash": "shell",
    "zsh": "shell",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "tsx": "tsx",
    "mts": "typescript",
    "cts": "typescript",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "c",
    "cpp": "cpp",
    "cc": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "rb": "ruby",
    "cs": "csharp",
    "php": "php",
    "kt": "kotlin",
    "kts": "kotlin",
    "swift": "swift",
    "scala": "scala",
    "html": "html",
    "htm": "html",
    "css": "css",
    "sql": "sql",
    "mk": "makefile",
    "dockerfile": "dockerfile",
}
_TEXT_NAMES = frozenset(
    {"LICENSE", "LICENCE", "COPYING", "NOTICE", "README", "CHANGES", "CHANGELOG", "HISTORY", "AUTHORS"}
    | {"CONTRIBUTORS"}
)
_LANG_BY_NAME = {"makefile": "makefile", "gnumakefile": "makefile", "dockerfile": "dockerfile"}


def split_ext(name: str) -> str:
    dot = name.rfind(".")
    return name[dot + 1 :].lower() if dot > 0 else ""


def detect_language(path: str) -> str | None:
    """The language Oya indexes ``path`` as, from its extension or name; None if none."""
    name = path.rsplit("/", 1)[-1]
    ext = split_ext(name)
    if ext in _LANG_BY_EXT:
        return _LANG_BY_EXT[ext]
    low = name.lower()
    if low in _LANG_BY_NAME:
        return _LANG_BY_NAME[low]
    if low.startswith("dockerfile."):
        return "dockerfile"
    if not ext and name.upper() in _TEXT_NAMES:
        return "text"
    return None
