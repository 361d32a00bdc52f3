"""Scanning: a repository folder in, a ``ScanResult`` out (the text files worth indexing, each
secret value masked, and every other file with the reason it was left out)."""
