"""The ONNX embedder: torch-free, batch-safe, and recorded with the store it built."""

from __future__ import annotations

import json

import numpy as np
import pytest

from executive.memory.store import mem0_memory
from executive.memory.store.base import Filter, NewMemory, StoreError
from executive.memory.store.embedder import (
    DEFAULT_EMBEDDER,
    EMBEDDERS,
    OnnxEncoder,
    encoder,
    model_file,
    use_threads,
)
from executive.memory.store.local import LocalStore
from executive.settings import Settings
from tests.conftest import run_cli
from tests.memory.conftest import meta, scope

pytestmark = pytest.mark.anyio

TEXTS = [
    "The staging mirror resets connections on first contact (ECONNRESET).",
    "Never push to a remote without a person's approval.",
    "",
    "ok",
    "On 2026-11-02 run 2026-11-02-demo-x1 of flaky-fetch passed after 2 attempts. " * 40,
]


def test_a_batch_gives_the_vectors_of_one_by_one_and_int8_stays_close():
    fp32 = encoder(model_file(EMBEDDERS["minilm-fp32"]))
    int8 = encoder(model_file(EMBEDDERS["minilm-int8"]))
    batch = fp32.encode(TEXTS)
    single = np.stack([fp32.encode([t])[0] for t in TEXTS])
    assert batch.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(batch, single)  # no padding, no shared range: the same bits
    quantized = int8.encode(TEXTS)
    assert np.min(np.sum(batch * quantized, axis=1)) > 0.95  # per-channel int8: close, not equal
    # The long text is cut at 256 tokens, as sentence-transformers does.
    longer = TEXTS[-1] * 2
    assert np.dot(fp32.encode([longer])[0], batch[-1]) > 0.9999


@pytest.mark.parametrize("key", sorted(EMBEDDERS))
def test_a_texts_vector_is_the_same_bits_alone_and_in_any_batch(key):
    """Dynamic int8 takes one activation range per call: were texts run together, a question's
    vector would depend on what it was embedded with (cosine 0.9991 on smoothed int8)."""
    model = encoder(model_file(EMBEDDERS[key]))
    question = "Why does slugify() keep the leading dashes of a title?"
    alone = model.encode([question])[0]
    # Neighbours far longer (padding, had there been any) and of other ranges, on either side.
    for batch in (
        [TEXTS[-1], question, "ok"],
        [question, *TEXTS],
        [*TEXTS, "Exit code 1\nE   AssertionError: 'a-b' != '-a-b'" * 20, question],
    ):
        vectors = model.encode(batch)
        assert np.array_equal(vectors[batch.index(question)], alone)
        assert np.array_equal(vectors, np.stack([model.encode([t])[0] for t in batch]))


def test_the_store_embedder_gives_a_question_one_vector_whichever_way_it_was_asked(tmp_path):
    """Hook B primes its questions in one batch; a search embeds one alone; the harvester's
    writes go in batches: all three give a text the same vector."""
    from executive.memory.store.embedder import Embedder

    spec = EMBEDDERS[DEFAULT_EMBEDDER]
    question = "What failed the last time the mirror was synced?"
    primed, alone, written = Embedder(spec), Embedder(spec), Embedder(spec)
    primed.prime([TEXTS[0], question, TEXTS[-1]])
    assert primed.embed(question, "search") == alone.embed(question, "search")
    assert written.embed_batch([TEXTS[-1], question])[1] == alone.embed(question, "search")
    assert written.embed(question) == alone.embed(question, "search")


def test_the_thread_count_changes_no_bit_of_a_vector():
    """Threads are a speed setting only: a store built on one count reads with another."""
    path = model_file(EMBEDDERS[DEFAULT_EMBEDDER])
    one, two = OnnxEncoder(path, threads=1), OnnxEncoder(path, threads=2)
    assert np.array_equal(one.encode(TEXTS), two.encode(TEXTS))
    assert np.array_equal(one.encode(TEXTS[-1:]), two.encode(TEXTS[-1:]))


def test_embed_threads_is_a_setting_that_refuses_nonsense():
    assert Settings().embed_threads == 1
    assert Settings(EXECUTIVE_EMBED_THREADS="2").embed_threads == 2
    with pytest.raises(ValueError, match="EXECUTIVE_EMBED_THREADS"):
        Settings(EXECUTIVE_EMBED_THREADS="0")
    with pytest.raises(ValueError, match="at least 1"):
        use_threads(0)


def test_the_smoothed_int8_is_closer_to_fp32_and_equal_to_itself_alone():
    fp32 = encoder(model_file(EMBEDDERS["minilm-fp32"])).encode(TEXTS)
    int8 = encoder(model_file(EMBEDDERS["minilm-int8"]))
    smooth = encoder(model_file(EMBEDDERS["minilm-int8-smooth"]))
    near_int8 = np.sum(fp32 * int8.encode(TEXTS), axis=1)
    batch = smooth.encode(TEXTS)
    near_smooth = np.sum(fp32 * batch, axis=1)
    # Measured on these texts: min 0.980 (int8: 0.969), mean 0.990 (int8: 0.983); over 755
    # LoCoMo turns and questions: min 0.980, mean 0.9964 (int8: 0.952, 0.9914).
    assert np.min(near_smooth) > 0.975
    assert np.mean(near_smooth) > np.mean(near_int8)
    # Each text runs alone, so its one activation range is its own: the same bits in a batch.
    alone = np.stack([smooth.encode([t])[0] for t in TEXTS])
    assert np.array_equal(batch, alone)


def test_the_default_embedder_is_the_settings_default_and_every_one_is_a_setting():
    field = Settings.model_fields["embedder"]
    assert field.default == DEFAULT_EMBEDDER == "minilm-int8-smooth"
    assert set(field.annotation.__args__) == set(EMBEDDERS)


async def test_a_store_refuses_another_embedder_until_it_is_rebuilt(tmp_path):
    store = await LocalStore.open(tmp_path / "store", tmp_path / "mem0", embedder="minilm-int8")
    await store.add(NewMemory("A memory embedded with int8.", scope(), meta(0)))
    await store.close()
    assert json.loads((tmp_path / "store" / mem0_memory.RECORD).read_text())["name"] == (
        EMBEDDERS["minilm-int8"].name
    )

    other = await LocalStore.open(tmp_path / "store", tmp_path / "mem0", embedder="minilm-fp32")
    try:
        with pytest.raises(StoreError) as refused:
            await other.search("int8", Filter(user_id="agent-test"), 5)
        assert "executive mem rebuild" in str(refused.value)
        assert EMBEDDERS["minilm-int8"].name in str(refused.value)
        with pytest.raises(StoreError):
            await other.add(NewMemory("Another.", scope(), meta(1)))
        await other.wipe()  # what a rebuild does first
        await other.add(NewMemory("A memory embedded with fp32.", scope(), meta(1)))
        assert await other.count(Filter(user_id="agent-test")) == 1
    finally:
        await other.close()
    assert json.loads((tmp_path / "store" / mem0_memory.RECORD).read_text())["name"] == (
        EMBEDDERS["minilm-fp32"].name
    )


async def test_a_store_from_before_embedders_were_recorded_asks_for_a_rebuild(tmp_path):
    (tmp_path / "store" / "qdrant").mkdir(parents=True)  # Qdrant local, torch MiniLM
    store = await LocalStore.open(tmp_path / "store", tmp_path / "mem0")
    try:
        with pytest.raises(StoreError, match="executive mem rebuild"):
            await store.list(None)
        await store.wipe()
        assert await store.list(None) == []
        assert not (tmp_path / "store" / "qdrant").exists()
    finally:
        await store.close()


def test_executive_mem_never_imports_torch(home):
    searched = run_cli(
        "--home",
        str(home),
        "mem",
        "search",
        "--query",
        "What broke?",
        env={"V3_MEMORY_ENABLED": "true", "PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert searched.returncode == 0, searched.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in searched.stderr.splitlines() if "|" in line
    }
    assert "onnxruntime" in imported  # a search embeds its question
    assert not {
        m for m in imported if m.split(".")[0] in ("torch", "transformers", "sentence_transformers")
    }

    listed = run_cli(
        "--home",
        str(home),
        "mem",
        "list",
        env={"V3_MEMORY_ENABLED": "true", "PYTHONPROFILEIMPORTTIME": "1"},
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in listed.stderr.splitlines() if "|" in line
    }
    assert "qdrant_edge" in imported  # the store really opened
    # A listing reads the vectors' payloads: no mem0, no embedding model, no torch.
    assert not {m for m in imported if m.split(".")[0] in ("mem0", "onnxruntime")}
    assert not {
        m for m in imported if m.split(".")[0] in ("torch", "transformers", "sentence_transformers")
    }


def test_switching_the_embedder_asks_for_a_rebuild_and_the_rebuild_serves_it(home):
    from tests.conftest import set_env
    from tests.memory.payloads import partial

    on = {"V3_MEMORY_ENABLED": "true"}
    added = run_cli("--home", str(home), "mem", "add", "--payload", json.dumps(partial()), env=on)
    assert added.returncode == 0, added.stderr[-2000:]
    set_env(home, EXECUTIVE_EMBEDDER="minilm-fp32")
    refused = run_cli("--home", str(home), "mem", "list", env=on)
    assert refused.returncode != 0
    assert "executive mem rebuild" in refused.stdout + refused.stderr
    rebuilt = run_cli("--home", str(home), "mem", "rebuild", env=on)
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    listed = run_cli("--home", str(home), "mem", "list", "--json", env=on)
    assert listed.returncode == 0 and json.loads(listed.stdout)["count"] == 1
    record = json.loads((home / ".state" / "store" / mem0_memory.RECORD).read_text())
    assert record["name"] == EMBEDDERS["minilm-fp32"].name
