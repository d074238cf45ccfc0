"""The broker-migration stream contract (src/migrate/stream): valid and invalid
records of every kind, the name rule, the line order rules."""
import copy
import json
import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
STREAM = os.path.join(REPO, "src", "migrate", "stream")
sys.path.insert(0, STREAM)

import broker_migration as bm  # noqa: E402
import build_schema  # noqa: E402

CONTEXT = os.path.join(REPO, "..", "shared", "contexts", "ngsi-ld-core-context-v1.8.jsonld")
if not os.path.exists(CONTEXT):
    CONTEXT = build_schema.DEFAULT_CONTEXT
T = "2024-01-02T03:04:05.678Z"
EX = "https://example.org/"


def entity(**attrs):
    data = {"id": "urn:ngsi-ld:E:1", "type": EX + "T", "createdAt": T, "modifiedAt": T}
    data.update(attrs)
    return {"kind": "entity", "data": data}


def prop(value=1, **extra):
    d = {"type": "Property", "value": value, "createdAt": T, "modifiedAt": T}
    d.update(extra)
    return d


SUBSCRIPTION = {"kind": "subscription", "tenant": "t1", "data": {
    "id": "urn:ngsi-ld:Subscription:1", "type": "Subscription",
    "entities": [{"type": EX + "T", "idPattern": ".*"}],
    "watchedAttributes": [EX + "p"], "q": "https://example%2Eorg/p>1;location", "isActive": False,
    "createdAt": T, "modifiedAt": T,
    "notification": {"attributes": [EX + "p"], "format": "normalized",
                     "endpoint": {"uri": "http://x/", "accept": "application/json",
                                  "receiverInfo": [{"key": "a", "value": "b"}]},
                     "timesSent": 3, "timesFailed": 0, "lastNotification": T}}}
REGISTRATION = {"kind": "registration", "data": {
    "id": "urn:ngsi-ld:ContextSourceRegistration:1", "type": "ContextSourceRegistration",
    "information": [{"entities": [{"type": EX + "T"}], "propertyNames": [EX + "p"],
                     "relationshipNames": ["urn:x:r"]}],
    "endpoint": "http://cs/", "createdAt": T, "modifiedAt": T, EX + "extra": 1}}
TEMPORAL_ENTITY = {"kind": "temporalEntity", "data": {"id": "urn:x:1", "type": EX + "T", "op": "created", "at": T}}
TEMPORAL_INSTANCE = {"kind": "temporalInstance", "data": {
    "id": "urn:x:1", "type": EX + "T", "attr": EX + "p", "op": "modified",
    "instance": {"instanceId": "urn:i:1", "createdAt": T, "modifiedAt": T, "type": "Property", "value": 2,
                 "datasetId": "urn:d:1", EX + "sub": prop("s")}}}
HEADER = {"kind": "header", "format": "broker-migration", "version": 1, "source": "Orion-LD"}

VALID = {
    "header": HEADER,
    "entity, every attribute type": entity(**{
        EX + "p": prop(1.5, observedAt=T, unitCode="CEL", **{EX + "sub": prop("x"), "urn:x:rel": {
            "type": "Relationship", "object": "urn:x:2", "createdAt": T, "modifiedAt": T}}),
        EX + "r": {"type": "Relationship", "object": "urn:x:2", "createdAt": T, "modifiedAt": T},
        EX + "g": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1, 2]}, "createdAt": T, "modifiedAt": T},
        EX + "l": {"type": "LanguageProperty", "languageMap": {"en": "a"}, "createdAt": T, "modifiedAt": T},
        EX + "v": {"type": "VocabProperty", "vocab": [EX + "A", "Property"], "createdAt": T, "modifiedAt": T},
        EX + "j": {"type": "JsonProperty", "json": {"not checked": {"short": 1}}, "createdAt": T, "modifiedAt": T},
        EX + "lp": {"type": "ListProperty", "valueList": [1, 2], "createdAt": T, "modifiedAt": T},
        EX + "c": prop({"short name inside a compound value": [1, {"x": 2}]}),
        "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1, 2]}, "createdAt": T, "modifiedAt": T},
    }),
    "entity, multi-instance": entity(**{EX + "m": [prop(1), prop(2, datasetId="urn:d:1"), prop(3, datasetId="urn:d:2")]}),
    "entity, multiple types": dict(entity(), data=dict(entity()["data"], type=[EX + "A", "urn:t:B"])),
    "subscription": SUBSCRIPTION,
    "registration": REGISTRATION,
    "temporalEntity": TEMPORAL_ENTITY,
    "temporalInstance": TEMPORAL_INSTANCE,
    "temporalInstance, deletion": {"kind": "temporalInstance", "data": {
        "id": "urn:x:1", "type": EX + "T", "attr": EX + "p", "op": "deleted",
        "instance": {"instanceId": "urn:i:2", "createdAt": T, "modifiedAt": T, "deletedAt": T}}},
}


@pytest.mark.parametrize("name", list(VALID))
def test_valid_records(name):
    assert bm.validate_record(VALID[name]) == []


def test_the_exporter_fixture_stream_is_valid():
    with open(os.path.join(REPO, "test", "fixtures", "orionld", "expected-stream.json"), encoding="utf-8") as f:
        records = json.load(f)
    assert bm.check_stream([json.dumps(r) for r in records]) == []


def mutate(record, path, value=None, delete=False):
    rec = copy.deepcopy(record)
    cur = rec
    for p in path[:-1]:
        cur = cur[p]
    if delete:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return rec


def renamed(record, path, old, new):
    rec = copy.deepcopy(record)
    cur = rec
    for p in path:
        cur = cur[p]
    cur[new] = cur.pop(old)
    return rec


E = VALID["entity, every attribute type"]
INVALID = {
    # (record, a text the errors must contain)
    "header, wrong version": (mutate(HEADER, ["version"], 2), "version"),
    "header, wrong format": (mutate(HEADER, ["format"], "other"), "format"),
    "header, no source": (mutate(HEADER, ["source"], delete=True), "source"),
    "unknown kind": ({"kind": "entities", "data": {}}, "kind"),
    "no kind": ({"data": {}}, "kind"),
    "entity, short type": (mutate(E, ["data", "type"], "Building"), '"Building"'),
    "entity, compact IRI type": (mutate(E, ["data", "type"], "ex:Building"), '"ex:Building"'),
    "entity, short attribute name": (renamed(E, ["data"], EX + "r", "owner"), '"owner"'),
    "entity, short Sub-Attribute name": (renamed(E, ["data", EX + "p"], EX + "sub", "accuracy"), '"accuracy"'),
    "entity, short vocab": (mutate(E, ["data", EX + "v", "vocab"], ["Office"]), '"Office"'),
    "entity, no createdAt": (mutate(E, ["data", "createdAt"], delete=True), "createdAt"),
    "entity, attribute without modifiedAt": (mutate(E, ["data", EX + "r", "modifiedAt"], delete=True), "modifiedAt"),
    "entity, Relationship without object": (mutate(E, ["data", EX + "r", "object"], delete=True), "object"),
    "entity, LanguageProperty with value": (renamed(E, ["data", EX + "l"], "languageMap", "value"), "languageMap"),
    "entity, unknown attribute type": (mutate(E, ["data", EX + "r", "type"], "Number"), "Number"),
    "entity, date not ISO 8601": (mutate(E, ["data", "modifiedAt"], 1700000000), "modifiedAt"),
    "entity, date without zone": (mutate(E, ["data", "modifiedAt"], "2024-01-02T03:04:05"), "modifiedAt"),
    "entity, two default instances": (entity(**{EX + "m": [prop(1), prop(2)]}), EX + "m"),
    "entity, @context": (mutate(E, ["data", "@context"], "http://ctx"), "@context"),
    "subscription, short watchedAttributes": (mutate(SUBSCRIPTION, ["data", "watchedAttributes"], ["p"]), '"p"'),
    "subscription, short entity type": (mutate(SUBSCRIPTION, ["data", "entities", 0, "type"], "T"), '"T"'),
    "subscription, short notification attribute": (
        mutate(SUBSCRIPTION, ["data", "notification", "attributes"], ["p"]), '"p"'),
    "subscription, short name in q": (mutate(SUBSCRIPTION, ["data", "q"], "temperature>20"), '"temperature"'),
    "subscription, IRI with dots in q": (mutate(SUBSCRIPTION, ["data", "q"], "https://example.org/p>1"), '"org/p"'),
    "subscription, no timesSent": (mutate(SUBSCRIPTION, ["data", "notification", "timesSent"], delete=True), "timesSent"),
    "subscription, negative timesFailed": (mutate(SUBSCRIPTION, ["data", "notification", "timesFailed"], -1), "timesFailed"),
    "subscription, status member": (mutate(SUBSCRIPTION, ["data", "status"], "active"), "status"),
    "subscription, no endpoint uri": (mutate(SUBSCRIPTION, ["data", "notification", "endpoint", "uri"], delete=True), "uri"),
    "registration, short propertyNames": (mutate(REGISTRATION, ["data", "information", 0, "propertyNames"], ["p"]), '"p"'),
    "registration, short relationshipNames": (
        mutate(REGISTRATION, ["data", "information", 0, "relationshipNames"], ["r"]), '"r"'),
    "registration, no endpoint": (mutate(REGISTRATION, ["data", "endpoint"], delete=True), "endpoint"),
    "registration, short member name": (mutate(REGISTRATION, ["data", "brand"], 1), "brand"),
    "temporalEntity, op modified": (mutate(TEMPORAL_ENTITY, ["data", "op"], "modified"), "op"),
    "temporalEntity, short type": (mutate(TEMPORAL_ENTITY, ["data", "type"], "Room"), '"Room"'),
    "temporalEntity, extra member": (mutate(TEMPORAL_ENTITY, ["data", "x"], 1), "x"),
    "temporalInstance, short attr": (mutate(TEMPORAL_INSTANCE, ["data", "attr"], "speed"), '"speed"'),
    "temporalInstance, op unknown": (mutate(TEMPORAL_INSTANCE, ["data", "op"], "appended"), "op"),
    "temporalInstance, no instanceId": (mutate(TEMPORAL_INSTANCE, ["data", "instance", "instanceId"], delete=True), "instanceId"),
    "temporalInstance, deletion without deletedAt": (mutate(TEMPORAL_INSTANCE, ["data", "op"], "deleted"), "deletedAt"),
    "temporalInstance, no type": (mutate(TEMPORAL_INSTANCE, ["data", "instance", "type"], delete=True), "type"),
    "temporalInstance, short Sub-Attribute": (
        renamed(TEMPORAL_INSTANCE, ["data", "instance"], EX + "sub", "sub"), '"sub"'),
    "tenant not a string": (mutate(TEMPORAL_ENTITY, ["tenant"], 5), "tenant"),
    "not an object": ([1, 2], "object"),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_records(name):
    record, text = INVALID[name]
    errors = bm.validate_record(record)
    assert errors, "accepted: %s" % name
    assert any(text in e for e in errors), errors


NAME_RULE_CASES = ["entity, short type", "entity, short attribute name", "entity, short Sub-Attribute name",
                   "entity, short vocab", "subscription, short watchedAttributes",
                   "registration, short propertyNames", "temporalEntity, short type", "temporalInstance, short attr",
                   "temporalInstance, short Sub-Attribute"]


@pytest.mark.parametrize("name", NAME_RULE_CASES)
def test_the_schema_alone_applies_the_name_rule(name):
    """What a JSON Schema validator (ajv in the importer) sees, without the Python walker."""
    from jsonschema import Draft202012Validator
    record, _ = INVALID[name]
    assert list(Draft202012Validator(bm.load_schema()).iter_errors(record))


@pytest.mark.parametrize("name", ["https://a.b/c", "http://x", "urn:a:b", "Property", "location", "observedAt"])
def test_expanded_names(name):
    assert bm.is_expanded(name)


@pytest.mark.parametrize("name", ["", "temp", "ex:temp", "ngsi-ld", "ngsi-ld:location", "ftp://x/y",
                                  "https://", "urn:", "https://a b", "@context", None, 5])
def test_names_that_are_not_expanded(name):
    assert not bm.is_expanded(name)


@pytest.mark.parametrize("q,names", [
    ("https://example%2Eorg/p>1", ["https://example.org/p"]),
    ("(a==1|b!=\"x;y|z\");!c", ["a", "b", "c"]),
    ("p%2Eq.sub==1", ["p.q", "sub"]),
    ("addr[city]==\"Berlin\"", ["addr"]),
    ("a~=x.*;b<=3;c>=4;d<5;e>6", ["a", "b", "c", "d", "e"]),
])
def test_q_attribute_names(q, names):
    assert bm.q_attribute_names(q) == names


def lines(*records):
    return [json.dumps(r) for r in records]


def test_check_stream_accepts_a_well_ordered_stream():
    assert bm.check_stream(lines(HEADER, REGISTRATION, VALID["entity, multi-instance"], TEMPORAL_ENTITY,
                                 TEMPORAL_INSTANCE)) == []


def test_check_stream_header_only_first():
    problems = bm.check_stream(lines(TEMPORAL_ENTITY, HEADER))
    assert problems == [(2, "a header may only be the first line")]


def test_check_stream_registration_after_other_records_of_its_tenant():
    problems = bm.check_stream(lines(HEADER, TEMPORAL_ENTITY, REGISTRATION))
    assert problems == [(3, 'registration after other records of tenant ""')]
    # another tenant's records do not count
    other = dict(TEMPORAL_ENTITY, tenant="x")
    assert bm.check_stream(lines(HEADER, other, REGISTRATION)) == []


def test_check_stream_temporal_entity_after_its_instances():
    problems = bm.check_stream(lines(TEMPORAL_INSTANCE, TEMPORAL_ENTITY))
    assert problems == [(2, "temporalEntity of urn:x:1 after its temporalInstance records")]


def test_check_stream_bad_lines():
    problems = bm.check_stream(["{not json", "", json.dumps(mutate(TEMPORAL_ENTITY, ["data", "op"], "x"))])
    assert problems[0][0] == 1 and problems[0][1].startswith("not JSON")
    assert problems[1] == (2, "empty line")
    assert problems[2][0] == 3


def test_committed_schema_is_what_build_schema_builds():
    if not os.path.exists(CONTEXT):
        pytest.skip("the NGSI-LD v1.8 core context is not on this machine (%s)" % CONTEXT)
    terms = build_schema.core_terms(CONTEXT)
    with open(build_schema.TERMS_FILE, encoding="utf-8") as f:
        assert json.load(f) == terms
    with open(build_schema.SCHEMA_FILE, encoding="utf-8") as f:
        assert f.read() == build_schema.render(build_schema.build(terms))


def test_core_terms_are_the_v18_context_terms():
    assert "VocabProperty" in bm.CORE_TERMS and "location" in bm.CORE_TERMS
    assert "ngsi-ld" not in bm.CORE_TERMS
    assert not any(t.startswith("@") for t in bm.CORE_TERMS)


def test_validator_program_exit_status(tmp_path):
    import subprocess
    good = tmp_path / "good.ndjson"
    good.write_text("\n".join(lines(HEADER, TEMPORAL_ENTITY)) + "\n")
    bad = tmp_path / "bad.ndjson"
    bad.write_text("\n".join(lines(HEADER, mutate(TEMPORAL_ENTITY, ["data", "type"], "Room"))) + "\n")
    prog = os.path.join(STREAM, "broker_migration.py")
    assert subprocess.run([sys.executable, prog, str(good)], capture_output=True).returncode == 0
    r = subprocess.run([sys.executable, prog, str(bad)], capture_output=True, text=True)
    assert r.returncode == 1
    assert 'line 2: type: name "Room" is not expanded' in r.stdout
