"""The exporter's defects of issue 21, one test each (each failed before its fix)."""
import io
import json
import os
import sys

import pytest

from conftest import EXPORTER, PREFIX, REPO, run_exporter

sys.path.insert(0, os.path.join(REPO, "src", "migrate", "exporters"))

import broker_migration  # noqa: E402
from orionld import cli  # noqa: E402
from orionld.common import ConvertError  # noqa: E402
from orionld.current import convert_entity, convert_registration, convert_subscription  # noqa: E402
from orionld.history import _instance_members  # noqa: E402

EX = "https://example=org/"
T = 1700000000


def entity_doc(attrs):
    return {"_id": {"id": "urn:ngsi-ld:T:1", "type": "https://example.org/T"}, "creDate": T, "modDate": T, "attrs": attrs}


def sub_doc(**extra):
    doc = {"_id": "urn:ngsi-ld:Subscription:X", "entities": [{"id": ".*", "isPattern": "true", "type": "https://example.org/T"}],
           "reference": "http://127.0.0.1:9/n", "createdAt": T, "modifiedAt": T}
    doc.update(extra)
    return doc


# ---- percent-encoded characters Orion-LD forbids in stored strings

def test_forbidden_characters_are_decoded_in_values_and_sub_attributes():
    out = convert_entity(entity_doc({
        EX + "name": {"type": "Property", "value": "O%27Brien %3Cb%3E %28x%29%3D%22y%22%3B", "creDate": T, "modDate": T,
                      "md": {EX + "note": {"type": "Property", "value": "it%27s"}}},
        EX + "addr": {"type": "Property", "value": {"street": "Rue de l%27Eglise", "n": [1, "a%3Bb"]}, "creDate": T, "modDate": T},
        EX + "label": {"type": "LanguageProperty", "value": {"fr": "l%27eau"}, "creDate": T, "modDate": T},
        EX + "percent": {"type": "Property", "value": "100%25 %2Fkept", "creDate": T, "modDate": T},
    }))
    assert out["https://example.org/name"]["value"] == "O'Brien <b> (x)=\"y\";"
    assert out["https://example.org/name"]["https://example.org/note"]["value"] == "it's"
    assert out["https://example.org/addr"]["value"] == {"street": "Rue de l'Eglise", "n": [1, "a;b"]}
    assert out["https://example.org/label"]["languageMap"] == {"fr": "l'eau"}
    assert out["https://example.org/percent"]["value"] == "100%25 %2Fkept", "only the forbidden characters"


def test_forbidden_characters_are_decoded_in_history_rows():
    # attribute rows and subAttributes rows go through the same member conversion
    for row, member, expected in (
        ({"valueType": "String", "text": "O%27Brien"}, "value", "O'Brien"),
        ({"valueType": "Compound", "compound": {"a": "%3Cx%3E"}}, "value", {"a": "<x>"}),
        ({"valueType": "LanguageMap", "compound": {"en": "it%27s"}}, "languageMap", {"en": "it's"}),
    ):
        out = {}
        _instance_members(row, "row", out)
        assert out[member] == expected


# ---- multi-object Relationship: the schema takes it, and the exporter validates what it writes

def test_the_schema_takes_a_multi_object_relationship():
    rec = {"kind": "entity", "data": {"id": "urn:ngsi-ld:T:1", "type": "https://example.org/T", "createdAt": "2024-01-01T00:00:00Z",
                                      "modifiedAt": "2024-01-01T00:00:00Z",
                                      "https://example.org/owners": {"type": "Relationship", "object": ["urn:a:1", "urn:a:2"],
                                                                     "createdAt": "2024-01-01T00:00:00Z",
                                                                     "modifiedAt": "2024-01-01T00:00:00Z"}}}
    assert broker_migration.validate_record(rec) == []
    rec["data"]["https://example.org/owners"]["object"] = []
    assert broker_migration.validate_record(rec) != []


def test_the_exporter_writes_only_records_the_stream_contract_takes():
    stream, err = io.StringIO(), io.StringIO()
    out = cli.Output(stream, err)
    out.write({"kind": "entity", "data": {"id": "urn:ngsi-ld:T:1", "type": "T", "createdAt": "2024-01-01T00:00:00Z",
                                          "modifiedAt": "2024-01-01T00:00:00Z"}})
    assert stream.getvalue() == ""
    assert out.errors == 1
    assert 'entity urn:ngsi-ld:T:1 is not valid by the stream contract' in err.getvalue()
    assert '"T" is not expanded' in err.getvalue()


# ---- a q that cannot become an NGSI-LD q; expiration -1 and LLONG_MAX

def test_a_q_that_cannot_become_an_ngsi_ld_q_is_refused_naming_it():
    with pytest.raises(ConvertError, match=r"q cannot become an NGSI-LD q: 'P;!P' \(\"P\" is not an expanded name"):
        convert_subscription(sub_doc(ldQ="P;!P"))
    with pytest.raises(ConvertError, match="a value is missing"):
        convert_subscription(sub_doc(ldQ=EX + "p.value=="))


def test_a_q_falls_back_to_the_legacy_form_that_converts():
    out = convert_subscription(sub_doc(ldQ="P;!P", expression={"q": EX + "p.value>1"}))
    assert out["q"] == "https://example%2Eorg/p>1"


@pytest.mark.parametrize("expiration", [-1, 9223372036854775807, 9.3e18])
def test_expiration_minus_one_and_llong_max_mean_no_expiry(expiration):
    assert "expiresAt" not in convert_subscription(sub_doc(expiration=expiration))
    reg = convert_registration({"_id": "urn:ngsi-ld:R:1", "createdAt": T, "modifiedAt": T, "expiration": expiration,
                                "contextRegistration": [{"entities": [{"id": "urn:x:1", "type": "https://example.org/T"}],
                                                         "providingApplication": "http://127.0.0.1:9/r"}]})
    assert "expiresAt" not in reg


def test_a_real_expiration_is_kept():
    assert convert_subscription(sub_doc(expiration=1800000000))["expiresAt"] == "2027-01-15T08:00:00.000Z"


# ---- the command line

def test_troe_db_naming_no_database_exit_2(loaded):
    run = run_exporter("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", loaded["TROE_URL"], "--troeDb", "ldbexp_nothing")
    assert run.returncode == 2
    assert "--troeDb ldbexp_nothing names no database on the history server" in run.stderr


def test_exit_2_leaves_an_existing_out_file_as_it_was(loaded, tmp_path):
    out = tmp_path / "stream.ndjson"
    out.write_text("kept\n")
    run = run_exporter("--mongo", loaded["MONGO_URL"], "--db", "ldbexp_none", "--out", str(out))
    assert run.returncode == 2
    assert out.read_text() == "kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["stream.ndjson"], "no temporary file left"


def test_a_connection_lost_mid_export_leaves_out_as_it_was(loaded, tmp_path, monkeypatch, capsys):
    import pymongo.errors
    from orionld import current
    out = tmp_path / "stream.ndjson"
    out.write_text("kept\n")
    real = current.convert_subscription

    def lost(doc):
        raise pymongo.errors.AutoReconnect("connection closed")
    monkeypatch.setattr(current, "convert_subscription", lost)
    code = cli.main(["--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--out", str(out)])
    monkeypatch.setattr(current, "convert_subscription", real)
    assert code == 2
    assert "database error during the export" in capsys.readouterr().err
    assert out.read_text() == "kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["stream.ndjson"]


def test_a_complete_export_replaces_out(loaded, tmp_path):
    out = tmp_path / "stream.ndjson"
    out.write_text("old\n")
    run = run_exporter("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--out", str(out))
    assert run.returncode == 1   # the fixture's bad documents
    assert json.loads(out.read_text().splitlines()[0])["kind"] == "header"


@pytest.mark.parametrize("option,uri", [
    ("--mongo", "mongodb://admin:s3cr%40t@127.0.0.1:1/"),
    ("--troe", "postgresql://admin:s3cr%40t@127.0.0.1:1"),
    ("--troe", "host=127.0.0.1 port=1 user=admin password=s3cr@t"),
])
def test_passwords_are_not_repeated(loaded, option, uri):
    args = ["--timeout", "1", "--mongo", loaded["MONGO_URL"], "--db", PREFIX]
    args += [option, uri] if option == "--troe" else []
    if option == "--mongo":
        args = ["--timeout", "1", "--mongo", uri]
    run = run_exporter(*args)
    assert run.returncode == 2
    assert "s3cr" not in run.stderr, run.stderr
    assert "***" in run.stderr


def test_a_reader_that_goes_away_ends_the_export_quietly(loaded, monkeypatch, capsys):
    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(sys, "stdout", Closed())
    code = cli.main(["--mongo", loaded["MONGO_URL"], "--db", PREFIX])
    monkeypatch.undo()
    assert code == 1
    assert capsys.readouterr().err == ""


def test_a_postgresql_user_without_access_to_postgres_exports_the_history(loaded):
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo
    troe = loaded["TROE_URL"]
    role = "ldbexp_limited"
    with psycopg.connect(make_conninfo(troe, dbname="postgres"), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        dbs = [r[0] for r in conn.execute("SELECT datname FROM pg_database WHERE datname = %s OR datname LIKE %s",
                                          (PREFIX, PREFIX + "\\_%")).fetchall()]
        conn.execute("REVOKE CONNECT ON DATABASE postgres FROM PUBLIC")
    try:
        for db in dbs:
            with psycopg.connect(make_conninfo(troe, dbname=db), autocommit=True) as conn:
                conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(sql.Identifier(role)))
        limited = make_conninfo(troe, user=role)
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(make_conninfo(limited, dbname="postgres")).close()
        full = run_exporter("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", troe, "--noCurrent")
        for args in (["--tenants", "default"], []):
            run = run_exporter("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", limited, "--noCurrent", *args)
            assert "permission denied" not in run.stderr, run.stderr
            history = [r for r in run.records if r["kind"].startswith("temporal") and "tenant" not in r]
            assert history == [r for r in full.records if r["kind"].startswith("temporal") and "tenant" not in r]
            assert history
    finally:
        with psycopg.connect(make_conninfo(troe, dbname="postgres"), autocommit=True) as conn:
            conn.execute("GRANT CONNECT ON DATABASE postgres TO PUBLIC")


# ---- geometries beyond Point, through the raw BSON path (FerretDB 1.x refuses nested arrays)

GEOMETRIES = [
    {"type": "LineString", "coordinates": [[13.4, 52.5], [13.5, 52.6]]},
    {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [0, 0]], [[0.2, 0.2], [0.2, 0.4], [0.4, 0.4], [0.2, 0.2]]]},
    {"type": "MultiPolygon", "coordinates": [[[[0, 0], [0, 1], [1, 1], [0, 0]]], [[[5, 5], [5, 6], [6, 6], [5, 5]]]]},
]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=[g["type"] for g in GEOMETRIES])
def test_geometries_beyond_point_through_raw_bson(geometry):
    import bson
    from bson.codec_options import CodecOptions
    stored = {"_id": {"id": "urn:ngsi-ld:T:1", "type": "https://example.org/T"}, "creDate": float(T), "modDate": float(T),
              "location": geometry,
              "attrs": {"https://uri=etsi=org/ngsi-ld/location": {"type": "GeoProperty", "value": geometry, "creDate": T, "modDate": T},
                        EX + "area": {"type": "GeoProperty", "value": geometry, "creDate": T, "modDate": T,
                                      "mdNames": []}}}
    # What pymongo hands the exporter: the document as MongoDB returns it, decoded as the exporter's client does.
    doc = bson.decode(bson.encode(stored), codec_options=CodecOptions(tz_aware=True))
    out = convert_entity(doc)
    assert out["https://uri.etsi.org/ngsi-ld/location"]["value"] == geometry
    assert out["https://example.org/area"]["value"] == geometry
    assert broker_migration.validate_record({"kind": "entity", "data": out}) == []
