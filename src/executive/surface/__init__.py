"""The memory surface: every ``executive mem`` operation, as JSON in and JSON out.

One door for a person at a shell, the daemon's control socket and the LLM engine's tools.
"""
