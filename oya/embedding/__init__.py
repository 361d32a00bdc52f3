"""Embedding: chunks in, unit vectors out (little-endian float32 blobs), each computed once per
model and content and cached."""
