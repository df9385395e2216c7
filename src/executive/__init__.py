"""executive: the executive loop of a 24/7 coding agent, with a memory that compounds."""

__version__ = "0.1.0"
