"""Workers: what runs a goal's step, told what to do and held apart.

The worker's side of a step: its vendor and command (``vendors``, ``claude_cli``), its
generated CLAUDE.md (``claude_md``), its environment allow-list (``environment``), the
verifiers that judge its output (``verifiers``, ``output``), and three rooms, each with a face:
``isolation`` (how it runs apart), ``egress`` (its one way out) and ``record`` (what it left,
read and told in a digest).

Nothing here may import memory or hooks: a worker only ever sees the pack as text."""
