"""SQLite storage through sqlite-utils. Imports ``core``, never ``tui``.

- ``db``          open a database (WAL, foreign keys, busy timeout), transactions
- ``migrations``  numbered schema migrations (``mNNN_name.py`` with ``up(db)``), applied at open
- ``users``       store an import in one transaction; list and load users
- ``fillers``     load filler pools
- ``search``      full-text search over turns
- ``embeddings``  the embedding cache (``core.ports.EmbeddingCache``)
- ``writer``      the single writer thread for writes made while other work runs
"""

import sys as _sys

# sqlite-utils imports pandas (0.2-0.4 s; installed here only for tests) and numpy (~0.06 s) when
# present, only to choose column types for tables *it* creates from pandas/numpy values. prefscope
# creates every table in its migrations and never stores such values, so hide both for that one
# import: they stay off the start-up path, and code importing them later still gets them.
_HIDDEN = [m for m in ("pandas", "numpy") if m not in _sys.modules]
if "sqlite_utils" not in _sys.modules:
    for _m in _HIDDEN:
        _sys.modules[_m] = None  # type: ignore[assignment]  # `import _m` -> ImportError
    try:
        import sqlite_utils.db  # noqa: F401
    finally:
        for _m in _HIDDEN:
            del _sys.modules[_m]
