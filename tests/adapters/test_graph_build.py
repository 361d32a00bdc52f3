"""Cross-file resolution, confidences, PageRank and determinism of the code graph."""

from __future__ import annotations

import textwrap

import pytest

from oya.graph.build import (
    AMBIGUOUS_MAX,
    CONTAINS,
    IMPORT_MODULE,
    IMPORT_NAME,
    SAME_SCOPE,
    UNIQUE_NAME,
    VIA_IMPORT,
    build_graph,
    graph_stats,
)
from oya.graph.parsing import parser_for
from oya.models import SourceFile


def parse_all(files: dict[str, str]):
    parser = parser_for("python")
    out = []
    for path, text in files.items():
        text = textwrap.dedent(text).lstrip("\n")
        out.append(parser.parse(SourceFile(path, "python", len(text), "", text.count("\n"), text)))
    return out


REPO = {
    "pkg/__init__.py": """
        from .models import Model
    """,
    "pkg/models.py": """
        import json

        class Base:
            def save(self):
                return json.dumps({})

            def flush(self):
                pass

        class Model(Base):
            def store(self):
                self.save()
                self.validate()
                return self.flush()

            def validate(self):
                return helper()

        def helper():
            return 1

        def run():
            return Model().store()
    """,
    "pkg/service.py": """
        import pkg.models
        from pkg import Model
        from pkg.models import helper as h
        from .other import thing

        class Service(Model):
            pass

        def serve():
            h()
            pkg.models.run()
            Model()
            unique_target()
            ambiguous()
            obj.only_method()
            len([])
            os.path.join("a")
            super_thing()
    """,
    "pkg/other.py": """
        def unique_target():
            pass

        def ambiguous():
            pass

        class Holder:
            def only_method(self):
                pass
    """,
    "pkg/third.py": """
        def ambiguous():
            pass
    """,
}


@pytest.fixture(scope="module")
def graph():
    nodes, edges = build_graph(parse_all(REPO))
    return {n.id: n for n in nodes}, {(e.source, e.target, e.kind): e.confidence for e in edges}


def test_contains_edges(graph):
    _, edges = graph
    assert edges[("pkg/models.py", "pkg/models.py::Model", "contains")] == CONTAINS
    assert edges[("pkg/models.py::Model", "pkg/models.py::Model.store", "contains")] == CONTAINS


def test_import_edges(graph):
    _, edges = graph
    assert edges[("pkg/service.py", "pkg/models.py", "imports")] == IMPORT_MODULE
    assert edges[("pkg/service.py", "pkg/other.py", "imports")] == IMPORT_NAME  # .other.thing
    assert edges[("pkg/service.py", "pkg/__init__.py", "imports")] == IMPORT_NAME  # pkg.Model
    assert not any(target == "json" for _, target, _ in edges)  # external: no edge


def test_resolution_through_import_binding_and_reexport(graph):
    _, edges = graph
    assert edges[("pkg/service.py::serve", "pkg/models.py::helper", "calls")] == VIA_IMPORT
    assert edges[("pkg/service.py::serve", "pkg/models.py::run", "calls")] == VIA_IMPORT
    # `from pkg import Model` follows pkg/__init__.py's re-export
    assert edges[("pkg/service.py::serve", "pkg/models.py::Model", "calls")] == VIA_IMPORT
    assert edges[("pkg/service.py::Service", "pkg/models.py::Model", "inherits")] == VIA_IMPORT


def test_same_module_and_self_resolution(graph):
    _, edges = graph
    assert edges[("pkg/models.py::Model.validate", "pkg/models.py::helper", "calls")] == SAME_SCOPE
    assert edges[("pkg/models.py::Model.store", "pkg/models.py::Model.validate", "calls")] == SAME_SCOPE
    # self.save is found on the base class inside the repo
    assert edges[("pkg/models.py::Model.store", "pkg/models.py::Base.save", "calls")] == SAME_SCOPE
    assert edges[("pkg/models.py::Model", "pkg/models.py::Base", "inherits")] == SAME_SCOPE
    assert edges[("pkg/models.py::run", "pkg/models.py::Model.store", "calls")] == SAME_SCOPE


def test_unique_and_ambiguous_name_matches(graph):
    _, edges = graph
    assert edges[("pkg/service.py::serve", "pkg/other.py::unique_target", "calls")] == UNIQUE_NAME
    assert edges[("pkg/service.py::serve", "pkg/other.py::Holder.only_method", "calls")] == UNIQUE_NAME
    ambiguous = {t: c for (s, t, k), c in edges.items() if s == "pkg/service.py::serve" and "ambiguous" in t}
    assert ambiguous == {"pkg/other.py::ambiguous": AMBIGUOUS_MAX, "pkg/third.py::ambiguous": AMBIGUOUS_MAX}


def test_unresolved_references_make_no_edge(graph):
    _, edges = graph
    targets = {t for (s, t, k) in edges if s == "pkg/service.py::serve"}
    assert all(t.startswith("pkg/") for t in targets)
    assert not any("len" in t or "join" in t or "super_thing" in t for t in targets)


def test_ambiguous_names_keep_at_most_three_nearest_candidates():
    files = {f"p{i}/m.py": "def dup():\n    pass\n" for i in range(6)}
    files["p3/caller.py"] = "def call():\n    dup()\n"
    _, edges = build_graph(parse_all(files))
    calls = [e for e in edges if e.kind == "calls"]
    assert len(calls) == 3
    assert "p3/m.py::dup" in {e.target for e in calls}  # same folder is nearest
    assert all(e.confidence == pytest.approx(0.1) for e in calls)  # 0.6 split over 6


def test_duplicate_edges_keep_max_confidence():
    files = {
        "a.py": "from b import f\n\ndef g():\n    f()\n    f()\n",
        "b.py": "def f():\n    pass\n",
    }
    _, edges = build_graph(parse_all(files))
    calls = [e for e in edges if e.kind == "calls"]
    assert [(e.source, e.target, e.confidence) for e in calls] == [("a.py::g", "b.py::f", VIA_IMPORT)]


def test_pagerank_favours_a_widely_called_function():
    files = {f"m{i}.py": f"from core import hub\n\ndef user{i}():\n    hub()\n" for i in range(8)}
    files["core.py"] = "def hub():\n    pass\n\ndef lonely():\n    pass\n"
    nodes, _ = build_graph(parse_all(files))
    rank = {n.id: n.centrality for n in nodes}
    assert rank["core.py::hub"] == max(rank.values()) == 1.0
    assert rank["core.py::hub"] > rank["core.py::lonely"]
    assert all(0.0 <= c <= 1.0 for c in rank.values())


def test_output_is_sorted_and_deterministic():
    parsed = parse_all(REPO)
    first = build_graph(parsed)
    second = build_graph(list(reversed(parse_all(REPO))))
    assert first == second
    nodes, edges = first
    assert [n.id for n in nodes] == sorted(n.id for n in nodes)
    assert [(e.source, e.target, e.kind) for e in edges] == sorted(
        (e.source, e.target, e.kind) for e in edges
    )
    assert all(round(e.confidence, 6) == e.confidence for e in edges)
    assert all(round(n.centrality, 6) == n.centrality for n in nodes)


def test_graph_stats_counts_per_kind(graph):
    nodes, edges = build_graph(parse_all(REPO))
    stats = graph_stats(nodes, edges)
    assert stats["nodes"] == len(nodes)
    assert stats["edges"] == len(edges)
    assert stats["nodes_module"] == len(REPO)
    assert sum(stats[f"edges_{k}"] for k in ("contains", "imports", "calls", "inherits")) == len(edges)


def test_empty_input():
    assert build_graph([]) == ([], [])
