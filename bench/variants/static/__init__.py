"""Issue 25's static embedding model (model2vec's recipe, distilled from MiniLM), kept runnable.

It lost its measurement against MiniLM (docs/DECISIONS.md, docs/quality.md), so it is no product
option: ``wordpiece`` (BERT WordPiece, pure stdlib, held to the ``tokenizers`` library),
``static_embed`` (a text's vector from int8 rows, pure stdlib), ``static_model`` (the distillation)
and ``embedder`` (``StaticEmbedder``, the rows of ``bench/variants/embedders.py`` and
``bench/commits_rank.py --embedder-rows``).
"""
