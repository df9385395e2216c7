"""The memory surface: every ``executive mem`` operation, as JSON in and JSON out."""
