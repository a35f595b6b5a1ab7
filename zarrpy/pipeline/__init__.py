"""Chunk I/O between stores and codecs: the thread pool, per-key locks,
V2 -> V3 conversion and the values at the array edge."""
