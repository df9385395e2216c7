"""The ONNX embedder as a mem0 embedder class (imports mem0: load it after ``mem0_door.prepare``).

``mem0_door.py`` registers it in mem0's ``EmbedderFactory``; mem0 builds it with a
``BaseEmbedderConfig`` whose ``model_kwargs`` name our embedder and the models directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mem0.embeddings.base import EmbeddingBase

from executive.memory.store.embedder import EMBEDDERS, Embedder


class OnnxEmbedding(Embedder, EmbeddingBase):
    def __init__(self, config: Any = None) -> None:
        EmbeddingBase.__init__(self, config)
        kwargs = self.config.model_kwargs or {}
        models_dir = kwargs.get("models_dir") or None
        Embedder.__init__(self, EMBEDDERS[kwargs["key"]], Path(models_dir) if models_dir else None)


class NoLlm:
    """The LLM mem0 builds but we never call: every write uses ``infer=False``.

    mem0's ``Memory()`` insists on an LLM; the stock OpenAI one imports the ``openai`` SDK
    (~0.4 s of start-up) and wants a key. This one costs nothing and says so if ever called.
    """

    def __init__(self, config: Any = None) -> None:
        self.config = config

    def generate_response(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the embedded store has no LLM: writes use infer=False")
