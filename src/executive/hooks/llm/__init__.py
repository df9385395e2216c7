"""The LLM skill engine (Claude Agent SDK). Importing it does not import the SDK."""

from executive.hooks.llm.engine import ClaudeEngine

__all__ = ["ClaudeEngine"]
