"""The memory surface: every ``executive mem`` operation, as JSON in and JSON out.

One door for a person at a shell, the daemon's control socket and the LLM engine's tools:

- ``operations``: the reads and writes (search, get, list, add, update, delete, …);
- ``maintenance``: the durability tools (snapshot, restore, rebuild, drift, purge, replay);
- ``build``: ``build_surface`` assembles both with backfill; ``open_surface`` gives the CLI the
  running daemon's surface or one of its own;
- ``control``: the daemon's control socket, its server and its client.
"""
