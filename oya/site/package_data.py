"""Where the site's templates, static files and npm pins are read from.

They live in the top-level ``site_template/`` folder of the source tree; a wheel installs that
folder as ``oya/site_template`` (``setup.py`` maps it), so an installed Oya reads it through
``importlib.resources`` and a source checkout (or an editable install) reads the folder itself.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_INSTALLED = Path(str(resources.files("oya").joinpath("site_template")))
_SOURCE = Path(__file__).resolve().parents[2] / "site_template"

TEMPLATE_DIR = _INSTALLED if _INSTALLED.is_dir() else _SOURCE
STATIC_DIR = TEMPLATE_DIR / "static"
VENDOR_PINS_DIR = TEMPLATE_DIR / "vendor"  # package.json and package-lock.json

__all__ = ["STATIC_DIR", "TEMPLATE_DIR", "VENDOR_PINS_DIR"]
