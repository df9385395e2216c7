"""Hooks A-E: gating, context, the skill files and the engines that carry them out."""
