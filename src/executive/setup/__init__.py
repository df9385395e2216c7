"""Set-up tools, run once by ``make setup`` and never imported at run time (a contract in
``pyproject.toml`` holds it): ``python -m executive.setup.models`` exports the packaged
embedding model to ONNX and quantizes it (:mod:`.models`, with :mod:`.smoothing`)."""
