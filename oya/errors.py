"""Oya's error hierarchy. Adapters translate third-party exceptions into these at the
boundary; the CLI and Dagster turn them into one readable line."""

from __future__ import annotations


class OyaError(Exception):
    """Base of every error Oya reports to a user as one line."""


class RepositoryError(OyaError):
    """The repository to index does not exist, is not a directory, or cannot be read."""


class IndexMissingError(OyaError):
    """No index where one was expected."""


class IndexCorruptError(OyaError):
    """An index exists but cannot be read."""


class QueryError(OyaError):
    """The query is empty or otherwise unusable."""


class ModelError(OyaError):
    """The embedding or answering model cannot be loaded or run."""


class SiteError(OyaError):
    """The static site cannot be built or served."""


class SetupError(OyaError):
    """A system package a make target needs is missing and cannot be installed here."""


class ParseError(OyaError):
    """A parser cannot read a file (too broken, too long, generated): it is indexed as text instead."""


class OutputBusyError(OyaError):
    """Another build is writing the same output folder (its lock is held)."""


class OutputNotOursError(OyaError):
    """A build would replace or delete a file or folder Oya cannot prove it wrote (oya.build.ownership)."""
