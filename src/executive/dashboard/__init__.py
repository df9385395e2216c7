"""The dashboard, ``/metrics`` and ``/healthz``, served by the daemon (read-only)."""
