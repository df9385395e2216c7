"""The read path: questions in plain English, a ranked answer, a pack.

``plan`` turns a hook's moment into questions, ``reader`` asks them of a store's read view in
several hops (its state in ``reading``, its refinements in ``refine``, its ranking in
``ranking``, files beside named ones in ``about``), and ``pack`` renders what it found within
2,000 tokens (counted by ``tokens``); ``synthesis`` is the LLM engine's shape of the same.
The reader's words live here too: the tokenizer (``words``), the keyword index and its BM25
(``lexical``) and a request's view of it (``scope_index``), which the stores keep as they
write (``store/wordindex.py``, ``store/pgwords.py``). Nothing here writes: an import contract
keeps the write path and the store's backends out of this whole folder.
"""
