"""The DuckDB index: files, chunks, vectors and graph rows in through one writer; one reader and
the query backends (BM25 in SQL, vectors in numpy) over it out."""
