"""The built-in skill engine: every hook carried out by rules in code, no LLM needed.

It follows the same skill files as the LLM engine, one small module per hook; each module's
``run`` is bound to its hook in :mod:`executive.hooks.dispatch`, where the engine is.
"""
