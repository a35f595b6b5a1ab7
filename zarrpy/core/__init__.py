"""Core types every layer shares: data types, ArrayBytes, ragged arrays,
the chunk grid, byte ranges and selection indexing. Imports nothing above it."""
