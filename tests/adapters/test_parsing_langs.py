"""Every tags-query language on a small project written for the test: golden symbols and edges.

Each fixture under tests/fixtures/langs/<name> has a module with a documented type, members, a
base type or interface, an import of another file and calls across files, so each language's
module system (relative paths, packages, namespaces, includes, ``use`` paths) is exercised. The
edge confidences are the graph's bands (oya/graph/build.py): 1.0 / 0.9 an import, 0.9 through an
import binding, 0.8 the same scope or package, 0.5 a unique name, 0.3 and below ambiguous names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oya.graph.build import build_graph
from oya.graph.keys import KeyIndex
from oya.graph.parsing import languages, parser_for
from oya.models import ParsedFile
from oya.scanning.reader import scan_repository

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "langs"

GOLDEN: dict[str, tuple[set[tuple[str, str]], set[tuple[str, str, str, float]]]] = {
    "js": (
        {
            ("class", "src/base.js::Entity"),
            ("method", "src/base.js::Entity.constructor"),
            ("method", "src/base.js::Entity.describe"),
            ("class", "src/user.js::User"),
            ("method", "src/user.js::User.label"),
            ("function", "src/user.js::main"),
            ("function", "src/util/index.js::formatName"),
            ("function", "src/util/index.js::shout"),
        },
        {
            ("src/user.js", "src/base.js", "imports", 1.0),
            ("src/user.js", "src/util/index.js", "imports", 1.0),
            ("src/user.js::User", "src/base.js::Entity", "inherits", 0.9),
            ("src/user.js::User.label", "src/base.js::Entity.describe", "calls", 0.8),
            ("src/user.js::User.label", "src/util/index.js::formatName", "calls", 0.9),
            ("src/user.js::main", "src/user.js::User", "calls", 0.8),
            ("src/user.js::main", "src/user.js::User.label", "calls", 0.5),
        },
    ),
    "ts": (
        {
            ("class", "src/api.ts::Repo"),
            ("method", "src/api.ts::Repo.get"),
            ("function", "src/api.ts::fetchUser"),
            ("class", "src/view.tsx::MemoryRepo"),
            ("method", "src/view.tsx::MemoryRepo.get"),
            ("function", "src/view.tsx::UserCard"),
        },
        {
            ("src/view.tsx", "src/api.ts", "imports", 1.0),
            ("src/view.tsx::MemoryRepo", "src/api.ts::Repo", "inherits", 0.9),
            ("src/view.tsx::UserCard", "src/api.ts::fetchUser", "calls", 0.9),
        },
    ),
    "go": (
        {
            ("function", "cmd/main.go::main"),
            ("function", "store/normalize.go::normalize"),
            ("class", "store/store.go::Getter"),
            ("method", "store/store.go::Getter.Get"),
            ("function", "store/store.go::New"),
            ("class", "store/store.go::Store"),
            ("method", "store/store.go::Store.Get"),
            ("method", "store/store.go::Store.Has"),
        },
        {
            ("cmd/main.go", "store/normalize.go", "imports", 1.0),
            ("cmd/main.go::main", "store/store.go::Getter.Get", "calls", 0.3),
            ("cmd/main.go::main", "store/store.go::New", "calls", 0.9),
            ("cmd/main.go::main", "store/store.go::Store.Get", "calls", 0.3),
            ("store/store.go::Store.Get", "store/normalize.go::normalize", "calls", 0.8),
            ("store/store.go::Store.Has", "store/store.go::Store.Get", "calls", 0.8),
        },
    ),
    "java": (
        {
            ("class", "src/main/java/com/acme/Circle.java::Circle"),
            ("method", "src/main/java/com/acme/Circle.java::Circle.Circle"),
            ("method", "src/main/java/com/acme/Circle.java::Circle.area"),
            ("method", "src/main/java/com/acme/Circle.java::Circle.describe"),
            ("class", "src/main/java/com/acme/Shape.java::Shape"),
            ("method", "src/main/java/com/acme/Shape.java::Shape.area"),
            ("class", "src/main/java/com/acme/util/Maths.java::Maths"),
            ("method", "src/main/java/com/acme/util/Maths.java::Maths.square"),
        },
        {
            ("src/main/java/com/acme/Circle.java", "src/main/java/com/acme/util/Maths.java", "imports", 1.0),
            (
                "src/main/java/com/acme/Circle.java::Circle",
                "src/main/java/com/acme/Shape.java::Shape",
                "inherits",
                0.8,
            ),
            (
                "src/main/java/com/acme/Circle.java::Circle.area",
                "src/main/java/com/acme/util/Maths.java::Maths.square",
                "calls",
                0.9,
            ),
            (
                "src/main/java/com/acme/Circle.java::Circle.describe",
                "src/main/java/com/acme/Circle.java::Circle.area",
                "calls",
                0.8,
            ),
        },
    ),
    "kotlin": (
        {
            ("class", "src/com/acme/Shapes.kt::Base"),
            ("class", "src/com/acme/Shapes.kt::Circle"),
            ("method", "src/com/acme/Shapes.kt::Circle.area"),
            ("method", "src/com/acme/Shapes.kt::Circle.describe"),
            ("class", "src/com/acme/Shapes.kt::Shape"),
            ("method", "src/com/acme/Shapes.kt::Shape.area"),
            ("function", "src/com/acme/util/Maths.kt::square"),
        },
        {
            ("src/com/acme/Shapes.kt", "src/com/acme/util/Maths.kt", "imports", 0.9),
            ("src/com/acme/Shapes.kt::Circle", "src/com/acme/Shapes.kt::Base", "inherits", 0.8),
            ("src/com/acme/Shapes.kt::Circle", "src/com/acme/Shapes.kt::Shape", "inherits", 0.8),
            ("src/com/acme/Shapes.kt::Circle.area", "src/com/acme/util/Maths.kt::square", "calls", 0.9),
            ("src/com/acme/Shapes.kt::Circle.describe", "src/com/acme/Shapes.kt::Circle.area", "calls", 0.8),
        },
    ),
    "rust": (
        {
            ("function", "src/lib.rs::seeded"),
            ("class", "src/store/mod.rs::Named"),
            ("method", "src/store/mod.rs::Named.name"),
            ("class", "src/store/mod.rs::Store"),
            ("method", "src/store/mod.rs::Store.name"),
            ("method", "src/store/mod.rs::Store.new"),
            ("method", "src/store/mod.rs::Store.put"),
            ("method", "src/store/mod.rs::Store.touch"),
        },
        {
            ("src/lib.rs", "src/store/mod.rs", "imports", 1.0),
            ("src/lib.rs::seeded", "src/store/mod.rs::Store.new", "calls", 0.9),
            ("src/lib.rs::seeded", "src/store/mod.rs::Store.put", "calls", 0.5),
            ("src/store/mod.rs::Store", "src/store/mod.rs::Named", "inherits", 0.8),
            ("src/store/mod.rs::Store.put", "src/store/mod.rs::Store.touch", "calls", 0.8),
        },
    ),
    "c": (
        {
            ("class", "include/kv/list.h::node_t"),
            ("class", "include/kv/list.h::node_t.node"),
            ("function", "src/list.c::list_push"),
            ("function", "src/list.c::node_new"),
            ("function", "src/main.c::main"),
        },
        {
            ("src/list.c", "include/kv/list.h", "imports", 1.0),
            ("src/list.c::list_push", "src/list.c::node_new", "calls", 0.8),
            ("src/main.c", "include/kv/list.h", "imports", 1.0),
            ("src/main.c::main", "src/list.c::list_push", "calls", 0.5),
        },
    ),
    "cpp": (
        {
            ("method", "src/shape.cpp::Square.area"),
            ("function", "src/shape.cpp::total"),
            ("class", "src/shape.hpp::Shape"),
            ("class", "src/shape.hpp::Square"),
            ("method", "src/shape.hpp::Square.Square"),
            ("method", "src/shape.hpp::Square.scaled"),
        },
        {
            ("src/shape.cpp", "src/shape.hpp", "imports", 1.0),
            ("src/shape.cpp::total", "src/shape.cpp::Square.area", "calls", 0.5),
            ("src/shape.hpp::Square", "src/shape.hpp::Shape", "inherits", 0.8),
        },
    ),
    "csharp": (
        {
            ("class", "Animal.cs::Animal"),
            ("method", "Animal.cs::Animal.Greet"),
            ("method", "Animal.cs::Animal.Speak"),
            ("class", "Dog.cs::Dog"),
            ("method", "Dog.cs::Dog.Bark"),
            ("method", "Dog.cs::Dog.Main"),
            ("method", "Dog.cs::Dog.Speak"),
        },
        {
            ("Animal.cs::Animal.Greet", "Animal.cs::Animal.Speak", "calls", 0.8),
            ("Dog.cs", "Animal.cs", "imports", 1.0),
            ("Dog.cs::Dog", "Animal.cs::Animal", "inherits", 0.9),
            ("Dog.cs::Dog.Main", "Animal.cs::Animal.Greet", "calls", 0.5),
            ("Dog.cs::Dog.Main", "Dog.cs::Dog", "calls", 0.8),
            ("Dog.cs::Dog.Speak", "Dog.cs::Dog.Bark", "calls", 0.8),
        },
    ),
    "ruby": (
        {
            ("class", "lib/formatting.rb::BaseGreeter"),
            ("method", "lib/formatting.rb::BaseGreeter.greet"),
            ("class", "lib/formatting.rb::Formatting"),
            ("method", "lib/formatting.rb::Formatting.decorate"),
            ("class", "lib/greeter.rb::Greeter"),
            ("method", "lib/greeter.rb::Greeter.default"),
            ("method", "lib/greeter.rb::Greeter.greet"),
        },
        {
            ("lib/greeter.rb", "lib/formatting.rb", "imports", 1.0),
            ("lib/greeter.rb::Greeter", "lib/formatting.rb::BaseGreeter", "inherits", 0.9),
            ("lib/greeter.rb::Greeter", "lib/formatting.rb::Formatting", "inherits", 0.9),
            ("lib/greeter.rb::Greeter.default", "lib/formatting.rb::BaseGreeter.greet", "calls", 0.3),
            ("lib/greeter.rb::Greeter.default", "lib/greeter.rb::Greeter.greet", "calls", 0.3),
            ("lib/greeter.rb::Greeter.greet", "lib/formatting.rb::Formatting.decorate", "calls", 0.8),
        },
    ),
    "php": (
        {
            ("class", "src/FileLogger.php::FileLogger"),
            ("method", "src/FileLogger.php::FileLogger.log"),
            ("method", "src/FileLogger.php::FileLogger.write"),
            ("class", "src/Logger.php::Logger"),
            ("method", "src/Logger.php::Logger.log"),
            ("class", "src/Support/Clock.php::Clock"),
            ("method", "src/Support/Clock.php::Clock.now"),
        },
        {
            ("src/FileLogger.php", "src/Support/Clock.php", "imports", 1.0),
            ("src/FileLogger.php::FileLogger", "src/Logger.php::Logger", "inherits", 0.8),
            ("src/FileLogger.php::FileLogger.log", "src/FileLogger.php::FileLogger.write", "calls", 0.8),
            ("src/FileLogger.php::FileLogger.log", "src/Support/Clock.php::Clock.now", "calls", 0.9),
        },
    ),
    "mixed": (
        {
            ("function", "server/main.go::main"),
            ("function", "server/main.go::render"),
            ("function", "server/users.py::list_users"),
            ("function", "server/users.py::render"),
            ("function", "web/src/api.ts::listUsers"),
            ("function", "web/src/render.ts::render"),
        },
        {
            ("server/main.go::main", "server/main.go::render", "calls", 0.8),
            ("server/main.go::main", "web/src/api.ts", "imports", 1.0),
            ("server/users.py::list_users", "server/users.py::render", "calls", 0.8),
            ("web/src/api.ts", "web/src/render.ts", "imports", 1.0),
            ("web/src/api.ts::listUsers", "server/users.py", "imports", 1.0),
            ("web/src/api.ts::listUsers", "web/src/render.ts::render", "calls", 0.9),
        },
    ),
}


def graph_of(name: str):
    scan = scan_repository(FIXTURES / name)
    parsed = []
    for f in scan.files:
        parser = parser_for(f.language)
        assert parser is not None, f.path
        parsed.append(parser.parse(f))
    return parsed, *build_graph(parsed)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_symbols_and_edges(name: str) -> None:
    parsed, nodes, edges = graph_of(name)
    symbols, links = GOLDEN[name]
    assert {(n.kind, n.id) for n in nodes if n.kind != "module"} == symbols
    assert {(e.source, e.target, e.kind, e.confidence) for e in edges if e.kind != "contains"} == links
    assert all(not p.errors for p in parsed)


def test_members_are_contained_by_their_type_even_when_defined_outside_it() -> None:
    _, _, edges = graph_of("go")
    contains = {(e.source, e.target) for e in edges if e.kind == "contains"}
    assert ("store/store.go::Store", "store/store.go::Store.Get") in contains
    _, _, edges = graph_of("rust")
    contains = {(e.source, e.target) for e in edges if e.kind == "contains"}
    assert ("src/store/mod.rs::Store", "src/store/mod.rs::Store.put") in contains


def node(name: str, node_id: str):
    _, nodes, _ = graph_of(name)
    return next(n for n in nodes if n.id == node_id)


@pytest.mark.parametrize(
    ("name", "node_id", "signature", "doc"),
    [
        ("js", "src/user.js::User", "class User extends Entity", "A registered user."),
        (
            "js",
            "src/util/index.js::formatName",
            "function formatName(first, last)",
            "Formats a name for display.",
        ),
        (
            "ts",
            "src/api.ts::fetchUser",
            "async function fetchUser(id: string): Promise<string>",
            "Fetches users from the back end.",
        ),
        (
            "go",
            "store/store.go::Store.Get",
            "func (s *Store) Get(key string) string",
            "Get returns the value of key.",
        ),
        (
            "java",
            "src/main/java/com/acme/Circle.java::Circle.area",
            "@Override public double area()",
            "The area of the circle.",
        ),
        ("rust", "src/store/mod.rs::Store", "pub struct Store", "Keeps values by key."),
        ("c", "src/list.c::node_new", "static node_t *node_new(int value)", "Allocates a node."),
        ("cpp", "src/shape.cpp::Square.area", "double Square::area() const", "Side squared."),
        ("ruby", "lib/greeter.rb::Greeter", "class Greeter < BaseGreeter", "Greets people politely."),
        ("php", "src/Logger.php::Logger", "interface Logger", "Writes lines somewhere."),
        ("kotlin", "src/com/acme/Shapes.kt::Shape", "interface Shape", "Something with an area."),
    ],
)
def test_signatures_and_doc_comments(name: str, node_id: str, signature: str, doc: str) -> None:
    found = node(name, node_id)
    assert (found.signature, found.docstring) == (signature, doc)


def test_spans_cover_the_definition_with_its_export_or_wrapper() -> None:
    found = node("js", "src/util/index.js::shout")
    assert (found.kind, found.start_line, found.end_line) == ("function", 6, 6)
    found = node("go", "store/store.go::Store")
    assert (found.start_line, found.end_line) == (5, 7)  # `type Store struct {...}`


# -- module keys and imports, one rule at a time --------------------------------------------------


@pytest.mark.parametrize(
    ("function", "path", "key", "spec", "relative", "expected"),
    [
        (languages._js_imports, "web/src/a.ts", "web/src/a", '"../lib/index.js"', False, [(None, "web/lib")]),
        (languages._js_imports, "a.js", "a", "'react'", False, [(None, "npm:react")]),
        (languages._js_imports, "a.js", "a", "'../../up'", False, []),  # out of the repository
        (
            languages._go_imports,
            "x.go",
            "x",
            '"github.com/spf13/cobra/v2"',
            False,
            [("cobra", "github_com/spf13/cobra/v2")],
        ),
        (languages._go_imports, "x.go", "x", '"gopkg.in/yaml.v3"', False, [("yaml", "gopkg_in/yaml_v3")]),
        (languages._dotted_imports, "A.java", "k", "com.acme.Store", False, [("Store", "com/acme/Store")]),
        (
            languages._dotted_imports,
            "a.php",
            "k",
            "App\\Support\\Clock",
            False,
            [("Clock", "App/Support/Clock")],
        ),
        (languages._ruby_imports, "lib/a/b.rb", "lib/a/b", "../c", True, [(None, "lib/c")]),
        (languages._c_imports, "src/x.c", "src/x_c", '"kv/list.h"', False, [(None, "kv/list_h")]),
        (languages._rust_imports, "src/a/b.rs", "src/a/b", "super::c::D", False, [("D", "src/a/c/D")]),
        (
            languages._rust_imports,
            "src/lib.rs",
            "src",
            "crate::x::{Y, z::W as V}",
            False,
            [("Y", "x/Y"), ("V", "x/z/W")],
        ),
        (languages._rust_imports, "src/lib.rs", "src", "child", True, [("child", "src/child")]),
    ],
)
def test_import_specs_become_module_keys(function, path, key, spec, relative, expected) -> None:
    assert function(path, key, spec, relative) == expected


def keys(*pairs: tuple[str, str]) -> KeyIndex:
    return KeyIndex([ParsedFile(path, key, (), ()) for path, key in pairs], {})


def test_locate_whole_tail_and_prefix_matches_with_their_bands() -> None:
    index = keys(("include/fmt/core.h", "include/fmt/core_h"), ("cmd/doc/doc.go", "cmd/doc"))
    assert index.locate("fmt/core_h", "src/a.cc") == ("include/fmt/core_h", [], 1.0)
    assert index.locate("github_com/x/tool/cmd/doc", "main.go") == ("cmd/doc", [], 1.0)
    assert index.locate("cmd/doc.Render", "main.go") == ("cmd/doc", ["Render"], 0.9)
    assert index.locate("npm:cmd/doc", "main.go") is None
    assert index.locate("nothing/here", "main.go") is None


def test_locate_prefers_the_nearest_of_several_keys_at_a_lower_band() -> None:
    index = keys(("a/util/x.h", "a/util/x_h"), ("b/util/x.h", "b/util/x_h"))
    assert index.locate("util/x_h", "b/main.c") == ("b/util/x_h", [], 0.5)
