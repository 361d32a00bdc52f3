"""The options of a retrieval: the one record where every tuning default lives.

Theory of operation: the building blocks (``fuse``, ``rank_files``, ``CodeGraph.expand``,
``build_context``) take their tuning parameters without defaults, and ``default_pipeline``
(``oya.core.pipeline``) passes them from here, so calling a block directly can never silently
run a setup other than the measured one. Each default says where it was measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oya.core.channels import CHANNEL_NAMES
from oya.core.confidence import ConfidenceRule
from oya.core.files import FILE_AGGREGATIONS


@dataclass(frozen=True, slots=True)
class RetrievalOptions:
    k: int = 10
    fetch_k: int = 100  # how deep each channel ranks before fusion
    hops: int = 2
    min_edge_confidence: float = 0.5
    max_graph_nodes: int = 24
    seed_count: int = 3
    max_per_file: int = 3
    context_budget: int = 2400  # tokens for snippets and diagram together
    diagram_budget: int = 600
    # the answer's diagram holds at most this many symbols: the paths between the matches
    # first (oya.core.answer_diagram); docs/DECISIONS.md, "The answer's diagram"
    diagram_nodes: int = 10
    expand_graph: bool = True
    channels: tuple[str, ...] = CHANNEL_NAMES
    # RRF's k: 10 rather than Cormack et al.'s 60 gives a channel's first ranks more say over
    # agreement far down the lists (three channels, not dozens of TREC runs);
    # bench/results/eval_quality.md, row "RRF k=60"
    rrf_k: int = 10
    # the semantic channel's first chunk goes first when its cosine leads the runner-up's by this
    # much (0 = off): code search R@1 +4.8 points, held out +4.1 (bench/results/eval_quality.md,
    # row "semantic lead off"); the scale is all-MiniLM-L6-v2's cosine
    semantic_lead: float = 0.04
    # one of FILE_AGGREGATIONS: decay (best chunk + 1/2 second + 1/4 third), not graph (a share of
    # the hits that call or import the file): graph handed the first place to the file a hit uses,
    # not the one holding it. Fix commits file R@1 +11.6 to +14.5, own eval code file R@1 +13.7
    # (95% interval [+9.0, +18.3]), prose file R@1 +6.2 (docs/DECISIONS.md, issue 16 item 3)
    file_aggregation: str = "decay"
    # the files ranked from chunks are fused (RRF) with BM25 over whole files (path + text,
    # oya.core.file_lexical), whose list counts this much: fix commits file R@1 / R@5 up, own
    # eval prose file R@1 up, code tasks unchanged (docs/DECISIONS.md, "Whole-file BM25 joins
    # the file ranking")
    file_lexical_weight: float = 0.5
    # the files whose path names the subject's scope prefix ("printer: fix ...", oya.core.scope)
    # are fused as one more list, counting this much: fix commits file R@1 +1.8, Rust +16.1;
    # 0.5 and 1.0 within a query of each other, 2.0 lost R@5 (docs/DECISIONS.md, "A subject's
    # scope moves its files up")
    scope_weight: float = 0.5
    # the files whose name the question spells (a stack frame's Foo.java, src/main.rs:4:5;
    # oya.core.scope.named_files) are fused as one more list, counting this much: with docs after
    # the code in each channel's list, issue reports R@1 +2.0 and R@5 +1.2 (docs/DECISIONS.md,
    # "Docs come after the code inside each channel's list")
    named_weight: float = 0.5
    # each of the first companion_seeds source files takes right after it the first of its
    # companions (a header's implementation, ``x-inl.h``, ``jv.c``'s ``jv_parse.c``; oya.core.companions)
    # ranked within the first companion_depth files (0 = off): issue reports file R@5 +1.9, fix
    # commits -0.7, R@1 unchanged; depth 20 or 40 lost (docs/DECISIONS.md, "A file's companion moves up beside it")
    companion_seeds: int = 3
    companion_depth: int = 10
    # fused score factor for test code (tests/, test_*.py, *_test.py, conftest.py) unless the
    # question asks about tests: tests repeat the names they test and crowd out the code itself
    test_weight: float = 0.7
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    intent: str | None = None  # reported intent, when the caller knows it better than the classifier
    weights: Mapping[str, float] | None = field(default=None)  # None: query.CHANNEL_WEIGHTS
    # the thresholds of the HIGH / MEDIUM / LOW banner (oya.core.confidence)
    confidence: ConfidenceRule = field(default_factory=ConfidenceRule)

    def __post_init__(self) -> None:
        for name in self.channels:
            if name not in CHANNEL_NAMES:
                raise ValueError(f"channel must be one of {', '.join(CHANNEL_NAMES)}; got {name!r}")
        if self.k < 1:
            raise ValueError("k must be at least 1")
        if self.diagram_nodes < 1:
            raise ValueError("diagram_nodes must be at least 1")
        if self.rrf_k < 1:
            raise ValueError("rrf_k must be at least 1")
        if self.file_aggregation not in FILE_AGGREGATIONS:
            raise ValueError(
                f"file_aggregation must be one of {', '.join(FILE_AGGREGATIONS)}; got {self.file_aggregation!r}"
            )
        if self.file_lexical_weight < 0.0:
            raise ValueError("file_lexical_weight must be at least 0")
        if self.scope_weight < 0.0:
            raise ValueError("scope_weight must be at least 0")
        if self.named_weight < 0.0:
            raise ValueError("named_weight must be at least 0")
        if self.companion_seeds < 0 or self.companion_depth < 0:
            raise ValueError("companion_seeds and companion_depth must be at least 0")
        if not 0.0 <= self.test_weight <= 1.0:
            raise ValueError("test_weight must be in [0, 1]")


def fetch_depth(opts: RetrievalOptions) -> int:
    """How deep each channel ranks before fusion (deeper when a path filter will drop some)."""
    filtered = bool(opts.include or opts.exclude)
    return max(opts.fetch_k, opts.k * 3) * (5 if filtered else 1)
