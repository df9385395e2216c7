"""The built-in skill engine's hooks: one module per hook, by rules in code (no LLM), following
the same skill files as the LLM engine; :mod:`executive.hooks.dispatch` calls each ``run``."""
