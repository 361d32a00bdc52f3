"""The graph channel's index of node names: which nodes a question's words can reach.

Theory of operation: the graph channel (``CodeGraph.match_names``) scores only nodes that share
a name token with the question, share a long prefix with one of its words, or lie in a file it
names. Finding them is an index from tokens to nodes, built on the first question. A repository
repeats its names (sympy: 39k nodes, 24k distinct names: ``__init__``, ``doit``, ``test_*``), so
the index is keyed by distinct *name*: each name is split into tokens once, and a token lists the
names that hold it, a name the nodes that bear it. A node's context tokens (its qualified name's
and its path's) are needed only for the nodes the question reaches, so they are made when first
asked for. Building it is the first question's largest cost in the browser (Pyodide runs it
about twice as slowly as CPython), which is why it does no per-node work it can skip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from oya.core.records import Node
from oya.core.tokenize import token_set

PREFIX = 5  # letters a name token and a question word must share to meet by prefix


class NameIndex:
    """Nodes by name token, name prefix and path; a node's name and context tokens."""

    __slots__ = (
        "_by_name",
        "_by_path",
        "_by_token",
        "_by_prefix",
        "_name_tokens",
        "_context",
        "_words",
        "_paths",
    )

    def __init__(self, nodes: Iterable[Node]) -> None:
        by_name: dict[str, list[str]] = {}
        by_path: dict[str, list[str]] = {}
        for node in nodes:
            by_name.setdefault(node.name, []).append(node.id)
            by_path.setdefault(node.path, []).append(node.id)
        words: dict[str, frozenset[str]] = {}  # each distinct word split once (token_set's cache)
        name_tokens: dict[str, frozenset[str]] = {}
        by_token: dict[str, list[str]] = {}
        by_prefix: dict[str, list[str]] = {}
        for name in by_name:
            toks = name_tokens[name] = token_set(name, words)
            for t in toks | {name.lower()}:
                by_token.setdefault(t, []).append(name)
            for p in {t[:PREFIX] for t in toks if len(t) >= PREFIX and t[:PREFIX].isalpha()}:
                by_prefix.setdefault(p, []).append(name)
        self._by_name = by_name
        self._by_path = by_path
        self._by_token = by_token
        self._by_prefix = by_prefix
        self._name_tokens = name_tokens
        self._words = words
        self._context: dict[str, frozenset[str]] = {}
        self._paths: dict[str, frozenset[str]] = {}

    def name_tokens(self, node: Node) -> frozenset[str]:
        """``frozenset(tokenize(node.name))``."""
        return self._name_tokens[node.name]

    def context_tokens(self, node: Node) -> frozenset[str]:
        """The tokens of ``node``'s qualified name and path (``tokenize(qualname + " " + path)``)."""
        toks = self._context.get(node.id)
        if toks is None:
            path = self._paths.get(node.path)
            if path is None:
                path = self._paths[node.path] = token_set(node.path, self._words)
            toks = self._context[node.id] = token_set(node.qualname, self._words) | path
        return toks

    def by_token(self, token: str) -> list[str]:
        """The nodes whose name holds ``token`` or, lower-cased, is it."""
        return [n for name in self._by_token.get(token, ()) for n in self._by_name[name]]

    def by_prefix(self, prefix: str) -> list[str]:
        """The nodes whose name holds a token starting with ``prefix`` (``PREFIX`` letters)."""
        return [n for name in self._by_prefix.get(prefix, ()) for n in self._by_name[name]]

    def paths(self) -> Mapping[str, Sequence[str]]:
        """Each path's nodes, in the graph's order."""
        return self._by_path
