"""The ``sharding_indexed`` codec: many inner chunks and an index in one stored object.

- :mod:`.codec`: :class:`ShardingCodec` (configuration, whole-shard encode and
  decode, partial updates);
- :mod:`.index`: :class:`ShardIndex`, the ``(offset, nbytes)`` table and its checks;
- :mod:`.partial`: :class:`ShardPartialDecoder`, reads of selections that
  fetch only the index and the inner chunks needed.
"""

from .codec import ShardingCodec
from .index import EMPTY, ShardIndex
from .partial import ShardPartialDecoder

__all__ = ["EMPTY", "ShardIndex", "ShardPartialDecoder", "ShardingCodec"]
