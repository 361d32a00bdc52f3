"""The one thing pyproject.toml cannot say: the top-level ``site_template/`` folder (templates,
static files, npm pins) is installed as the package data ``oya/site_template``, so a non-editable
install can build a site. ``oya.site.package_data`` finds it in either place.

A ``find`` table in pyproject.toml cannot rename a folder into a package, and an explicit package
list there would miss every new subpackage; here the list is still found, plus the one mapping.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["oya*", "pipelines*"]), "oya.site_template"],
    package_dir={"oya.site_template": "site_template"},
)
