"""The CPython question path: an index and a question in, ranked evidence and an answer out
(extractive, or written by a local or OpenAI-compatible model)."""
