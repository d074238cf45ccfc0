"""The exporter against real servers: the whole stream, record by record,
against expected records written by hand from the conversion rules."""
import json

import pytest

import broker_migration
from conftest import PREFIX, expected_records


def key(rec):
    d = rec.get("data", {})
    inst = d.get("instance", {})
    return (rec["kind"], rec.get("tenant", ""), d.get("id"), d.get("at"), inst.get("instanceId"))


@pytest.fixture(scope="module")
def full(loaded):
    from conftest import run_exporter
    return run_exporter("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", loaded["TROE_URL"])


def test_stream_equals_expected_record_by_record(full):
    expected = expected_records()
    got = full.records
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g == e, "record %d (line %d) differs: %s" % (i, i + 1, key(e))
    assert len(got) == len(expected), "got %d records, expected %d" % (len(got), len(expected))


def test_every_line_is_valid_by_the_stream_contract(full):
    assert broker_migration.check_stream(full.lines) == []


def test_header_first_and_registrations_before_anything_else(full):
    kinds = [r["kind"] for r in full.records]
    assert kinds[0] == "header"
    last_registration = max(i for i, k in enumerate(kinds) if k == "registration")
    first_other = min(i for i, k in enumerate(kinds) if k not in ("header", "registration"))
    assert last_registration < first_other


def test_temporal_entity_records_precede_the_entity_instances(full):
    seen_instance = set()
    for r in full.records:
        ident = (r.get("tenant", ""), r["data"].get("id")) if "data" in r else None
        if r["kind"] == "temporalInstance":
            seen_instance.add(ident)
        elif r["kind"] == "temporalEntity":
            assert ident not in seen_instance


def test_what_is_not_exported_is_reported_one_line_each(full):
    err = full.errlines
    expected = [
        'not exported: entity Room1: type "Room" is not an expanded name (an NGSIv2-written entity)',
        'error: entity urn:ngsi-ld:Room:R2: attribute https://example.org/temp has the unknown attribute type "Number": not exported',
        'error: entity urn:ngsi-ld:Room:R3: attribute https://example.org/blob: a value of type bytes cannot be converted to JSON: not exported',
        "error: entity urn:ngsi-ld:Room:R4 creDate: 'yesterday' is not a timestamp: not exported",
        'not exported: NGSIv2 subscription 65a000000000000000000001 in csubs',
        'not exported: casubs document 65a000000000000000000002 (the casubs collection)',
        'not exported: history of entity urn:ngsi-ld:Building:B1, entities row urn:ngsi-ld:attribute:instance:e7: operation mode "Update" has no temporalEntity op',
        'error: history of entity urn:ngsi-ld:Building:B1, attributes row urn:ngsi-ld:attribute:instance:a14: the number nan cannot be converted to JSON: not exported',
        'not exported: history of entity urn:ngsi-ld:Ghost:G1 (1 entity rows, 1 attribute rows): its type is known neither by history nor current state',
    ]
    assert err[:-1] == expected
    assert err[-1].startswith("exported: registration 2, entity 3, subscription 4, temporalEntity 6, temporalInstance 21;")
    assert err[-1].endswith("not exported: 5; errors: 4")


def test_exit_status_1_when_something_could_not_be_converted(full):
    assert full.returncode == 1


def test_no_current_gives_history_only(loaded, export):
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", loaded["TROE_URL"], "--noCurrent")
    kinds = {r["kind"] for r in run.records}
    assert kinds == {"header", "temporalEntity", "temporalInstance"}
    history = [r for r in expected_records() if r["kind"].startswith("temporal")]
    assert run.records[1:] == history
    # the current state still names the type of Vehicle:V1 (history rows only)
    assert any(r["data"]["id"] == "urn:ngsi-ld:Vehicle:V1" for r in run.records[1:])


def test_without_troe_there_is_no_history(loaded, export):
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX)
    assert run.records == [r for r in expected_records() if not r["kind"].startswith("temporal")]
    assert not any("history" in l for l in run.errlines)


@pytest.mark.parametrize("spec,tenants", [("t1", {"t1"}), ("default", {""}), ("", {""}), ("default,t1", {"", "t1"})])
def test_tenants_option(loaded, export, spec, tenants):
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", loaded["TROE_URL"], "--tenants", spec)
    got = [r for r in run.records if r["kind"] != "header"]
    assert {r.get("tenant", "") for r in got} == tenants
    assert got == [r for r in expected_records()[1:] if r.get("tenant", "") in tenants]


def test_out_writes_the_stream_to_a_file(loaded, export, tmp_path):
    path = tmp_path / "stream.ndjson"
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--tenants", "t1", "--out", str(path))
    assert run.stdout == ""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(l) for l in lines] == [expected_records()[0]] + \
        [r for r in expected_records() if r.get("tenant") == "t1" and not r["kind"].startswith("temporal")]
    assert run.returncode == 0
    assert run.errlines[-1].startswith("exported: registration 0, entity 1, subscription 1, temporalEntity 0, temporalInstance 0;")


def test_troe_db_prefix_differs_from_db(loaded, export):
    # no TRoE database named after this prefix: the history comes from none, the current state still exports
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", loaded["TROE_URL"],
                 "--troeDb", "ldbexp_nothing_here", "--tenants", "t1")
    assert [r["kind"] for r in run.records] == ["header", "entity", "subscription"]
