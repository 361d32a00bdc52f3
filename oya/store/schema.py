"""What the index's writer and its reader agree on: the names of the files an index is, and the
schema version a reader accepts (an index of another version is rebuilt, never read).
"""

INDEX_FILE = "index.duckdb"
# The size of the index as last written whole, beside it. A patched copy keeps the blocks DuckDB
# freed (networkx: 44 MB written whole, 85 MB after one patch, 111 MB after nine), so past
# ``oya.store.writer.MAX_GROWTH`` times that size the next build writes the index whole again,
# which compacts it.
WHOLE_SIZE_FILE = "index.duckdb.whole-bytes"
STAGED_SUFFIX = ".staged"  # a build's new index, beside the live one until its checks pass
SCHEMA_VERSION = "2"
# tables a version-2 index may lack (written by an older build); a reader treats them as empty,
# and a rebuild writes such an index whole instead of patching it
LATER_TABLES = ("origins",)
