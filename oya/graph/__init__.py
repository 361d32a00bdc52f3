"""The code graph: a ``ScanResult`` in; each file's symbols and references, the edges linking them
across files and every symbol's centrality out."""
