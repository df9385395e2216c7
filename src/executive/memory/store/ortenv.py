"""ONNX Runtime, imported with its telemetry off: the embedded path makes no network call.

Official onnxruntime wheels (1.32.0 here) carry 1DS telemetry on Linux too
(microsoft/onnxruntime#27379): importing the module creates a device id and an offline event
store under ``~/.cache/Microsoft/DeveloperTools/.onnxruntime``, a session file in the
temporary folder, and an uploader that sends events to Microsoft. ``ORT_DISABLE_TELEMETRY=1``
turns all of it off (no uploader, no device id, no cache), but only when set before the
runtime initializes, which happens at import and is latched for the process. So every
import of onnxruntime in this package goes through :func:`onnxruntime`.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

VARIABLE = "ORT_DISABLE_TELEMETRY"


class TelemetryOn(RuntimeError):
    pass


def onnxruntime() -> ModuleType:
    """The ``onnxruntime`` module, its telemetry off; :class:`TelemetryOn` when something
    imported it first without :data:`VARIABLE` (too late to turn off in this process)."""
    if "onnxruntime" not in sys.modules:
        os.environ[VARIABLE] = "1"
    elif os.environ.get(VARIABLE) != "1":
        raise TelemetryOn(
            f"onnxruntime was imported before {VARIABLE}=1 was set, so its telemetry is on "
            "for this process: import it through executive.memory.store.ortenv"
        )
    import onnxruntime as ort

    return ort
