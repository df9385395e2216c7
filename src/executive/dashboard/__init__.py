"""The dashboard, ``/metrics`` and ``/healthz``, served by the daemon (read-only)."""

from __future__ import annotations

from executive.dashboard.pages import Context
from executive.dashboard.routes import build_app
from executive.dashboard.server import service

__all__ = ["Context", "build_app", "service"]
