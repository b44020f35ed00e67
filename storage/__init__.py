"""SQLite storage through sqlite-utils. Imports ``core``, never ``tui``.

- ``db``          open a database (WAL, foreign keys, busy timeout), transactions
- ``migrations``  numbered schema migrations (``mNNN_name.py`` with ``up(db)``), applied at open
- ``users``       store an import in one transaction; list and load users
- ``fillers``     load filler pools
- ``search``      full-text search over turns
- ``embeddings``  the embedding cache (``core.ports.EmbeddingCache``)
- ``writer``      the single writer thread for writes made while other work runs
"""
