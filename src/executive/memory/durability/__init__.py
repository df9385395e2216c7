"""Git is the source of truth: the store is rebuilt from the harvest ledgers (``rebuild``),
compared with them (``drift``), snapshotted daily (``snapshot``), and, when several homes share
one store, read as the union of their ledgers (``shared``).
What the rest of the daemon uses is named here, and imported when first used
(:mod:`executive.memory.face`).
"""

from typing import TYPE_CHECKING

from executive.memory.face import on_first_use

if TYPE_CHECKING:
    from executive.memory.durability.drift import drift as find_drift
    from executive.memory.durability.drift import fix_drift as fix_drift
    from executive.memory.durability.rebuild import Progress as Progress
    from executive.memory.durability.rebuild import RebuildError as RebuildError
    from executive.memory.durability.rebuild import installation as installation
    from executive.memory.durability.rebuild import purge as purge
    from executive.memory.durability.rebuild import rebuild as rebuild_store
    from executive.memory.durability.rebuild import restore as restore
    from executive.memory.durability.shared import Member as Member
    from executive.memory.durability.shared import SharedLedgers as SharedLedgers
    from executive.memory.durability.shared import member as member
    from executive.memory.durability.snapshot import SnapshotError as SnapshotError
    from executive.memory.durability.snapshot import SnapshotRefused as SnapshotRefused
    from executive.memory.durability.snapshot import latest as latest_snapshot
    from executive.memory.durability.snapshot import load as load_snapshot
    from executive.memory.durability.snapshot import overdue as snapshot_overdue
    from executive.memory.durability.snapshot import take as take_snapshot

__all__ = [
    "Member",
    "Progress",
    "RebuildError",
    "SharedLedgers",
    "SnapshotError",
    "SnapshotRefused",
    "find_drift",
    "fix_drift",
    "installation",
    "latest_snapshot",
    "load_snapshot",
    "member",
    "purge",
    "rebuild_store",
    "restore",
    "snapshot_overdue",
    "take_snapshot",
]
__getattr__ = on_first_use(__name__)
