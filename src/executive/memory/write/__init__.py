"""The write path: the harvester is the only writer.

A payload is stamped (``envelope``), checked (``classify``, ``limits``), deduplicated and
written through the store by the ``harvester``, each write journalled first in the harvest
ledger (``ledger``, ``writes``); ``principles`` names the constitution's rules.
"""
