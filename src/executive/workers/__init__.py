"""Workers: vendors, the generated CLAUDE.md, the environment allow-list, verifiers.

Nothing here may import memory or hooks: a worker only ever sees the pack as text."""
