"""The LLM skill engine (Claude Agent SDK). Importing it does not import the SDK."""
