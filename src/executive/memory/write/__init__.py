"""The write path: the harvester is the only writer.

A payload is stamped (``envelope``), checked (``classify``, ``limits``), deduplicated and
written through the store by the ``harvester``, each write journalled first in the harvest
ledger (``ledger``, ``writes``); ``principles`` names the constitution's rules.
What the rest of the daemon uses is named here, and imported when first used
(:mod:`executive.memory.face`).
"""

from typing import TYPE_CHECKING

from executive.memory.face import on_first_use

if TYPE_CHECKING:
    from executive.memory.write.classify import Rejected as Rejected
    from executive.memory.write.classify import classify as classify_memory
    from executive.memory.write.envelope import stamp as stamp
    from executive.memory.write.fields import Rejection as Rejection
    from executive.memory.write.harvester import PRINCIPLE_REFUSED as PRINCIPLE_REFUSED
    from executive.memory.write.harvester import Harvester as Harvester
    from executive.memory.write.ledger import HarvestLedger as HarvestLedger
    from executive.memory.write.limits import MAX_TEXT_CHARS as MAX_TEXT_CHARS
    from executive.memory.write.principles import TrustedRules as TrustedRules
    from executive.memory.write.writes import HarvestSummary as HarvestSummary

__all__ = [
    "MAX_TEXT_CHARS",
    "PRINCIPLE_REFUSED",
    "HarvestLedger",
    "HarvestSummary",
    "Harvester",
    "Rejected",
    "Rejection",
    "TrustedRules",
    "classify_memory",
    "stamp",
]
__getattr__ = on_first_use(__name__)
