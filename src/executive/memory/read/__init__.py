"""The read path: questions in plain English, a ranked answer, a pack.

``plan`` turns a hook's moment into questions, ``reader`` asks them of a store's read view in
several hops, and ``pack`` renders what it found within 2,000 tokens; ``synthesis`` is the LLM
engine's shape of the same. The reader's words live here too (``words``, ``lexical``,
``scope_index``), which the stores keep as they write. Nothing here writes: an import
contract keeps the write path and the store's backends out of this whole folder.
What the rest of the daemon uses is named here, and imported when first used
(:mod:`executive.memory.face`).
"""

from typing import TYPE_CHECKING

from executive.memory.face import on_first_use

if TYPE_CHECKING:
    from executive.memory.read.about import files_of as files_of
    from executive.memory.read.pack import HEADING as PACK_HEADING
    from executive.memory.read.pack import Pack as Pack
    from executive.memory.read.pack import render as render_pack
    from executive.memory.read.plan import for_bundle as for_bundle
    from executive.memory.read.plan import for_failure as for_failure
    from executive.memory.read.plan import for_question as for_question
    from executive.memory.read.plan import for_step as for_step
    from executive.memory.read.reader import Reader as Reader
    from executive.memory.read.reader import scope_names as scope_names
    from executive.memory.read.reading import ReadRequest as ReadRequest
    from executive.memory.read.reading import ReadResult as ReadResult
    from executive.memory.read.reading import Scope as Scope
    from executive.memory.read.synthesis import bullet as bullet
    from executive.memory.read.synthesis import cite as cite
    from executive.memory.read.synthesis import render as render_findings
    from executive.memory.read.tokens import PACK_TOKEN_CAP as PACK_TOKEN_CAP
    from executive.memory.read.tokens import estimate as estimate_tokens

__all__ = [
    "PACK_HEADING",
    "PACK_TOKEN_CAP",
    "Pack",
    "ReadRequest",
    "ReadResult",
    "Reader",
    "Scope",
    "bullet",
    "cite",
    "estimate_tokens",
    "files_of",
    "for_bundle",
    "for_failure",
    "for_question",
    "for_step",
    "render_findings",
    "render_pack",
    "scope_names",
]
__getattr__ = on_first_use(__name__)
