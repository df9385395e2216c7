from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from executive.memory.write.classify import Rejected, classify, validate, validate_batch
from executive.memory.write.envelope import Defaults, Payload, stamp
from tests.memory.payloads import DEFAULTS, partial, stamped

Mutation = Callable[[dict[str, Any]], Any]


def meta(**changes: Any) -> Mutation:
    def apply(p: dict[str, Any]) -> dict[str, Any]:
        p["metadata"].update(changes)
        return p

    return apply


def top(**changes: Any) -> Mutation:
    def apply(p: dict[str, Any]) -> dict[str, Any]:
        p.update(changes)
        return p

    return apply


def drop(name: str, inside: bool = False) -> Mutation:
    def apply(p: dict[str, Any]) -> dict[str, Any]:
        (p["metadata"] if inside else p).pop(name)
        return p

    return apply


# (case id, base type, mutation, rejected field, words in the reason)
CASES: list[tuple[str, str, Mutation, str, str]] = [
    ("payload-is-a-list", "episodic", lambda p: [p], "payload", "JSON object"),
    ("payload-is-a-string", "episodic", lambda p: "remember this", "payload", "JSON object"),
    ("text-empty", "episodic", top(text=""), "text", "non-empty"),
    ("text-blank", "episodic", top(text="   \n"), "text", "non-empty"),
    ("text-missing", "episodic", drop("text"), "text", "non-empty"),
    ("text-not-string", "episodic", top(text=42), "text", "non-empty"),
    ("user-id-empty", "episodic", top(user_id=""), "user_id", "V3_MEM0_USER_ID"),
    ("agent-id-other", "episodic", top(agent_id="worker"), "agent_id", "executive"),
    ("app-id-empty", "episodic", top(app_id=""), "app_id", "required"),
    ("app-id-unreserved-underscore", "episodic", top(app_id="_my-bundle"), "app_id", "reserved"),
    ("app-id-bare-underscore", "episodic", top(app_id="_"), "app_id", "reserved"),
    ("app-id-empty-skill", "episodic", top(app_id="_skill-"), "app_id", "reserved"),
    ("app-id-not-kebab", "episodic", top(app_id="My_Bundle"), "app_id", "kebab"),
    ("run-id-missing", "episodic", drop("run_id"), "run_id", "required"),
    ("run-id-no-date", "episodic", top(run_id="run-1"), "run_id", "YYYY-MM-DD"),
    ("run-id-impossible-date", "episodic", top(run_id="2026-13-45-x"), "run_id", "YYYY-MM-DD"),
    ("immutable-not-bool", "episodic", top(immutable="yes"), "immutable", "true or false"),
    ("metadata-not-object", "episodic", top(metadata=["type", "episodic"]), "metadata", "object"),
    (
        "schema-version-empty",
        "episodic",
        meta(schema_version=""),
        "metadata.schema_version",
        "required",
    ),
    (
        "schema-version-major",
        "episodic",
        meta(schema_version="2.0.0"),
        "metadata.schema_version",
        "major",
    ),
    ("env-unknown", "episodic", meta(env="staging"), "metadata.env", "not one of"),
    ("type-unknown", "episodic", meta(type="fact"), "metadata.type", "not one of"),
    ("category-unknown", "episodic", meta(category="misc"), "metadata.category", "not one of"),
    (
        "importance-unknown",
        "episodic",
        meta(importance="urgent"),
        "metadata.importance",
        "not one of",
    ),
    (
        "trigger-unknown",
        "semantic",
        meta(trigger="manual", actor="human"),
        "metadata.trigger",
        "not one of",
    ),
    ("actor-unknown", "episodic", meta(actor="robot"), "metadata.actor", "not one of"),
    ("confidence-string", "episodic", meta(confidence="high"), "metadata.confidence", "number"),
    ("confidence-bool", "episodic", meta(confidence=True), "metadata.confidence", "number"),
    ("confidence-nan", "semantic", meta(confidence=float("nan")), "metadata.confidence", "number"),
    (
        "confidence-above-one",
        "semantic",
        meta(confidence=1.5),
        "metadata.confidence",
        "between 0 and 1",
    ),
    (
        "confidence-negative",
        "semantic",
        meta(confidence=-0.1),
        "metadata.confidence",
        "between 0 and 1",
    ),
    (
        "confidence-outside-type-range",
        "semantic",
        meta(confidence=0.5),
        "metadata.confidence",
        "0.7-0.95",
    ),
    ("episodic-confidence-not-one", "episodic", meta(confidence=0.9), "metadata.confidence", "1.0"),
    ("cohort-empty", "episodic", meta(cohort=""), "metadata.cohort", "non-empty"),
    ("cohort-blank", "episodic", meta(cohort="  "), "metadata.cohort", "non-empty"),
    (
        "vendor-unknown",
        "episodic",
        meta(worker_vendor="gpt"),
        "metadata.worker_vendor",
        "not one of",
    ),
    (
        "vendor-with-human-actor",
        "semantic",
        meta(worker_vendor="claude"),
        "metadata.worker_vendor",
        "only allowed",
    ),
    (
        "worker-without-vendor",
        "episodic",
        drop("worker_vendor", inside=True),
        "metadata.worker_vendor",
        "required",
    ),
    ("source-empty", "episodic", meta(source=""), "metadata.source", "repository path"),
    (
        "harvest-run-no-date",
        "episodic",
        meta(harvest_run="greeting"),
        "metadata.harvest_run",
        "YYYY-MM-DD",
    ),
    (
        "harvest-run-not-run-id",
        "episodic",
        meta(harvest_run="2026-12-01-other"),
        "metadata.harvest_run",
        "equal run_id",
    ),
    ("outcome-unknown", "episodic", meta(outcome="maybe"), "metadata.outcome", "not one of"),
    ("tags-not-list", "episodic", meta(tags="a,b"), "metadata.tags", "list"),
    (
        "tags-too-many",
        "episodic",
        meta(tags=[f"t{i}" for i in range(9)]),
        "metadata.tags",
        "at most 8",
    ),
    ("tag-with-space", "episodic", meta(tags=["two words"]), "metadata.tags", "token"),
    ("tag-leading-dash", "episodic", meta(tags=["-x"]), "metadata.tags", "token"),
    ("expires-at-words", "reflective", meta(expires_at="tomorrow"), "metadata.expires_at", "ISO"),
    (
        "expires-at-date-only",
        "reflective",
        meta(expires_at="2027-01-01"),
        "metadata.expires_at",
        "ISO",
    ),
    ("principle-not-immutable", "principle", top(immutable=False), "immutable", "always immutable"),
    ("unknown-top-level-field", "episodic", top(score=0.9), "score", "unknown field"),
    (
        "unknown-metadata-field",
        "episodic",
        meta(priority="P1"),
        "metadata.priority",
        "unknown field",
    ),
    ("key-malformed", "episodic", meta(key="not-a-key"), "metadata.key", "content key"),
    (
        "metadata-immutable-disagrees",
        "semantic",
        meta(immutable=True),
        "metadata.immutable",
        "equal",
    ),
]


@pytest.mark.parametrize(
    ("kind", "mutate", "field", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_rejection_names_its_field_and_reason(kind, mutate, field, words):
    payload = mutate(copy.deepcopy(stamped(kind)))
    rejections = classify(payload)
    matching = [r for r in rejections if r.field == field]
    assert matching, f"expected a rejection of {field}, got {rejections}"
    assert any(words in r.reason for r in matching), matching


@pytest.mark.parametrize("kind", ["episodic", "principle", "semantic", "procedural", "reflective"])
def test_valid_forms_of_each_type_pass(kind):
    payload = validate(stamped(kind))
    assert isinstance(payload, Payload)
    assert payload.metadata.type == kind
    assert len(payload.key) == 32


@pytest.mark.parametrize(
    "changes",
    [
        {"app_id": "_skill-web-scraper"},
        {"app_id": "_executive"},
        {"app_id": "a1-b2"},
        {"metadata": {"tags": ["SCREAMING_SNAKE", "kebab-case", "x1"]}},
        {"metadata": {"tags": [f"t{i}" for i in range(8)]}},
        {"run_id": "2026-12-01", "metadata": {}},
    ],
)
def test_valid_variants_pass(changes):
    payload = stamped("episodic", **copy.deepcopy(changes))
    if "run_id" in changes:
        payload["metadata"]["harvest_run"] = changes["run_id"]
    assert classify(payload) == []


def test_all_problems_are_reported_not_only_the_first():
    payload = stamped(
        "semantic", text="", app_id="_nope", metadata={"env": "staging", "confidence": 3}
    )
    fields = {r.field for r in classify(payload)}
    assert {"text", "app_id", "metadata.env", "metadata.confidence"} <= fields


def test_metadata_not_an_object_stops_the_metadata_checks():
    rejections = classify({**stamped("episodic"), "metadata": "episodic"})
    assert [r.field for r in rejections] == ["metadata"]


def test_empty_cohort_is_left_out_not_rejected():
    for cohort in (None, ""):
        payload = stamp(partial("episodic"), Defaults(user_id="u1", cohort=cohort))
        assert "cohort" not in payload["metadata"]
        assert classify(payload) == []


def test_a_set_cohort_is_stamped():
    payload = stamp(partial("episodic"), Defaults(user_id="u1", cohort="run-7"))
    assert payload["metadata"]["cohort"] == "run-7"
    assert validate(payload).metadata.cohort == "run-7"


def test_a_batch_with_one_bad_item_is_rejected_whole_with_the_item_named():
    good, bad = stamped("episodic"), stamped("semantic", metadata={"env": "staging"})
    with pytest.raises(Rejected) as caught:
        validate_batch([good, bad, good])
    assert [r.field for r in caught.value.rejections] == ["[1].metadata.env"]


def test_validate_batch_returns_models_when_all_pass():
    payloads = validate_batch([stamped(k) for k in ("episodic", "principle")])
    assert [p.type for p in payloads] == ["episodic", "principle"]


def test_defaults_stamp_fills_and_explicit_values_win():
    payload = stamp(
        partial("semantic", user_id="explicit", metadata={"env": "dev", "actor": "executive"}),
        DEFAULTS,
    )
    assert payload["user_id"] == "explicit"
    assert payload["metadata"]["env"] == "dev"
    assert payload["metadata"]["actor"] == "executive"
    assert payload["agent_id"] == "executive"
    assert payload["metadata"]["harvest_run"] == payload["run_id"]
    assert payload["metadata"]["schema_version"] == "1.3.0"


def test_files_are_optional_relative_bounded_and_an_older_memory_stays_valid():
    about = stamped("procedural", metadata={"files": ["src/weather/parser.py", "README.md"]})
    assert classify(about) == []
    assert validate(about).metadata.files == ["src/weather/parser.py", "README.md"]
    older = stamped("procedural", metadata={"schema_version": "1.1.0"})
    assert classify(older) == [] and validate(older).metadata.files is None
    marked = stamped(
        "episodic",
        metadata={
            "files": ["a.py"],
            "outdated_files": ["a.py"],
            "outdated_by": "2026-12-04-weather-abc",
        },
    )
    assert classify(marked) == []


@pytest.mark.parametrize(
    ("files", "words"),
    [
        ("src/a.py", "must be a list"),
        (["/etc/passwd"], "is absolute"),
        (["../other/x.py"], "not in plain form"),
        (["./x.py"], "not in plain form"),
        (["a//b.py"], "not in plain form"),
        (["a\\b.py"], "backslash"),
        (["a\nb.py"], "control character"),
        ([""], "is empty"),
        ([3], "is not a string"),
        (["x" * 201], "at most 200"),
        ([f"f{i}.py" for i in range(21)], "at most 20 paths"),
    ],
)
def test_a_path_that_is_not_plain_and_relative_is_refused_by_name(files, words):
    [problem] = classify(stamped("procedural", metadata={"files": files}))
    assert problem.field == "metadata.files" and words in problem.reason
    [problem] = classify(stamped("procedural", metadata={"outdated_files": files}))
    assert problem.field == "metadata.outdated_files"


def test_outdated_by_is_a_run_id():
    [problem] = classify(stamped("episodic", metadata={"outdated_by": "yesterday"}))
    assert problem.field == "metadata.outdated_by"


def test_symbols_and_what_was_observed_are_optional_and_checked_by_name():
    card = stamped(
        "episodic",
        metadata={
            "files": ["django/contrib/staticfiles/handlers.py"],
            "symbols": ["StaticFilesHandlerMixin.get_response_async", "serve"],
            "observed": ["verifiers", "files"],
        },
    )
    assert classify(card) == []
    assert validate(card).metadata.symbols == [
        "StaticFilesHandlerMixin.get_response_async",
        "serve",
    ]
    older = stamped("episodic", metadata={"schema_version": "1.2.0"})
    assert classify(older) == [] and validate(older).metadata.observed is None


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("symbols", "serve", "must be a list"),
        ("symbols", ["a b"], "is not a dotted identifier"),
        ("symbols", ["x" * 121], "is over 120 characters"),
        ("symbols", [f"f{i}" for i in range(13)], "at most 12 entries"),
        ("observed", ["the worker said so"], "is not one of files, verifiers"),
        ("observed", ["files", "verifiers", "files"], "at most 2 entries"),
    ],
)
def test_a_symbol_or_an_observation_out_of_shape_is_refused_by_name(field, value, words):
    [problem] = classify(stamped("episodic", metadata={field: value}))
    assert problem.field == f"metadata.{field}" and words in problem.reason
