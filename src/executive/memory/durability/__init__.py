"""Git is the source of truth: the store is rebuilt from the harvest ledgers (``rebuild``),
compared with them (``drift``), snapshotted daily (``snapshot``), and, when several homes share
one store, read as the union of their ledgers (``shared``).
"""
