"""Egress: the one way out of a sandboxed worker's network.

A run's route (``route``) starts a proxy of its own (``proxy``) that reads each request's
head (``request``) and lets a name lead only where the operator's allow-list and the address
rules (``addresses``) allow.
"""

from executive.workers.egress.route import (
    EgressUnavailable,
    opened,
    plan_for,
)

__all__ = ["EgressUnavailable", "opened", "plan_for"]
