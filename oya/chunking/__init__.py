"""Chunking: the scanned files and their parses in, the chunks the index searches out (and which
of them hold a secret-looking string)."""
