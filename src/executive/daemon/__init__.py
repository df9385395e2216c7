"""The long-running process: supervision, signals, readiness and scheduled jobs."""
