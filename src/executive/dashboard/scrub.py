"""The one door through which the dashboard's text passes the log redaction.

Kept to one small wrapper so that moving the redactor (into ``executive.redact``) changes
one import here and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from markupsafe import Markup

from executive.logs import redactor, secrets_from_environment


def learn(secrets: Iterable[str]) -> None:
    """Teach the process-wide redactor the settings' secrets and the environment's."""
    redactor().add(secrets_from_environment())
    redactor().add(secrets)


def scrub(text: str) -> str:
    return redactor().scrub(text)


def scrub_value(value: Any) -> Any:
    """Jinja's ``finalize``: every printed value is scrubbed before it is escaped."""
    if isinstance(value, Markup):  # our own SVG: scrubbed, and still markup
        return Markup(scrub(str(value)))
    return scrub(value) if isinstance(value, str) else value
