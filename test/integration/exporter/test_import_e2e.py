"""Orion-LD to ldbroker end to end (issue 21, seed 001 importer behaviour 9): the Orion-LD fixture data in the test
servers (MongoDB content in FerretDB, TRoE in PostgreSQL) -> the exporter -> ldbroker-import into embdb on disk ->
a broker started on the same store -> entity counts per type, every entity, subscription and registration equal to
the exported stream, temporal evolutions equal; importing the same stream again refuses everything."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from conftest import PREFIX, REPO, run_exporter

NODE = shutil.which("node") or "node"
IMPORTER = os.path.join(REPO, "dist", "src", "import-main.js")
BROKER = os.path.join(REPO, "dist", "src", "main.js")
CORE = "https://uri.etsi.org/ngsi-ld/"
# Core IRIs the broker renders by their core term (the stream may hold either, seed 001 §2.5).
CORE_TERMS = {CORE + t: t for t in ("location", "observationSpace", "operationSpace")}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, tenant=""):
    req = urllib.request.Request("http://127.0.0.1:%d/ngsi-ld/v1%s" % (port, path))
    if tenant:
        req.add_header("NGSILD-Tenant", tenant)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read() or b"null")


def q(s):
    return urllib.parse.quote(s, safe="")


def compact(v):
    """The record with core IRIs as the broker names them, for comparison."""
    if isinstance(v, list):
        return [compact(x) for x in v]
    if isinstance(v, dict):
        return {CORE_TERMS.get(k, k): compact(x) for k, x in v.items()}
    return v


@pytest.fixture(scope="module")
def migrated(loaded):
    if not os.path.exists(IMPORTER):
        pytest.fail("dist/ is not built: run `npm run build` (make test builds it)")
    work = tempfile.mkdtemp(prefix="ldbroker-e2e-")
    stream = os.path.join(work, "stream.ndjson")
    exported = run_exporter("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", loaded["TROE_URL"], "--out", stream)
    records = [json.loads(l) for l in open(stream, encoding="utf-8")]
    # The source's jsonldContext of a subscription, served from a file: the import runs without the network.
    ctx = os.path.join(work, "contexts")
    os.mkdir(ctx)
    with open(os.path.join(ctx, "index.json"), "w") as f:
        json.dump({"https://example.org/context.jsonld": "example.jsonld"}, f)
    with open(os.path.join(ctx, "example.jsonld"), "w") as f:
        json.dump({"@context": {"ex": "https://example.org/"}}, f)
    db = os.path.join(work, "db")
    imp = subprocess.run([NODE, IMPORTER, "--database", "embdb", "--dbDir", db, "--troe", "embdb", "--contextDir", ctx,
                          "--file", stream],
                         capture_output=True, text=True, timeout=120)
    port = free_port()
    broker = subprocess.Popen([NODE, BROKER, "--dbDir", db, "--troe", "embdb", "--contextDir", ctx, "--port", str(port),
                               "--host", "127.0.0.1",
                               "--connectionPoolSize", "1", "--logLevel", "warn"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if broker.poll() is not None:
                    pytest.fail("the broker exited: %s" % broker.stderr.read().decode())
                time.sleep(0.2)
        yield {"records": records, "import": imp, "port": port, "stream": stream, "db": db, "exported": exported,
               "contexts": ctx}
    finally:
        broker.terminate()
        broker.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


def of(records, kind):
    return [r for r in records if r["kind"] == kind]


def test_every_record_imported(migrated):
    imp = migrated["import"]
    assert imp.returncode == 0, imp.stderr
    n = {k: len(of(migrated["records"], k)) for k in ("entity", "subscription", "registration", "temporalEntity", "temporalInstance")}
    assert imp.stderr.splitlines()[:5] == [
        "entities: %d imported, 0 refused" % n["entity"],
        "subscriptions: %d imported, 0 refused" % n["subscription"],
        "registrations: %d imported, 0 refused" % n["registration"],
        "temporal entity events: %d imported, 0 refused" % n["temporalEntity"],
        "temporal instances: %d imported, 0 refused" % n["temporalInstance"],
    ]


def test_entity_counts_per_type(migrated):
    port = migrated["port"]
    counts = {}
    for r in of(migrated["records"], "entity"):
        types = r["data"]["type"] if isinstance(r["data"]["type"], list) else [r["data"]["type"]]
        for t in types:
            counts[(r.get("tenant", ""), t)] = counts.get((r.get("tenant", ""), t), 0) + 1
    for tenant in {t for t, _ in counts}:
        status, _, types = get(port, "/types?details=true", tenant)
        assert status == 200
        assert sorted(x["id"] for x in types) == sorted(t for (tn, t) in counts if tn == tenant)
    for (tenant, t), n in counts.items():
        status, headers, _ = get(port, "/entities?type=%s&count=true&limit=0" % q(t), tenant)
        assert status == 200
        assert {k.lower(): v for k, v in headers.items()}["ngsild-results-count"] == str(n), t


def test_every_entity_equals_its_record(migrated):
    for r in of(migrated["records"], "entity"):
        status, _, body = get(migrated["port"], "/entities/%s?options=sysAttrs" % q(r["data"]["id"]), r.get("tenant", ""))
        assert status == 200, r["data"]["id"]
        assert body == compact(r["data"]), r["data"]["id"]


def test_every_subscription_equals_its_record(migrated):
    for r in of(migrated["records"], "subscription"):
        data = r["data"]
        status, _, body = get(migrated["port"], "/subscriptions/%s?options=sysAttrs" % q(data["id"]), r.get("tenant", ""))
        assert status == 200, data["id"]
        for k, v in data.items():
            if k == "notification":
                for nk, nv in v.items():
                    assert body["notification"][nk] == nv, "%s notification.%s" % (data["id"], nk)
            else:
                assert body[k] == compact(v), "%s %s" % (data["id"], k)
        expected = "paused" if data.get("isActive") is False else "active"
        assert body["status"] in (expected, "expired"), data["id"]


def test_every_registration_equals_its_record(migrated):
    for r in of(migrated["records"], "registration"):
        data = r["data"]
        status, _, body = get(migrated["port"], "/csourceRegistrations/%s?options=sysAttrs" % q(data["id"]), r.get("tenant", ""))
        assert status == 200, data["id"]
        for k, v in data.items():
            assert body[k] == compact(v), "%s %s" % (data["id"], k)


def test_temporal_evolutions_equal_the_history(migrated):
    port = migrated["port"]
    by_entity = {}
    for r in of(migrated["records"], "temporalInstance"):
        by_entity.setdefault((r.get("tenant", ""), r["data"]["id"]), []).append(r["data"])
    assert by_entity, "the fixture has history"
    for (tenant, eid), rows in by_entity.items():
        status, _, body = get(port, "/temporal/entities/%s?options=sysAttrs&lastN=1000" % q(eid), tenant)
        assert status == 200, eid
        got = {}
        for attr, instances in body.items():
            if isinstance(instances, list):
                for i in instances:
                    got[i["instanceId"]] = (CORE_TERMS.get(attr, attr), i)
        for row in rows:
            inst = row["instance"]
            attr, g = got[inst["instanceId"]]
            assert attr == CORE_TERMS.get(row["attr"], row["attr"])
            for member in ("createdAt", "modifiedAt", "observedAt", "deletedAt", "datasetId", "value", "object",
                           "languageMap", "vocab", "json"):
                if member in inst:
                    assert g[member] == inst[member], "%s %s %s" % (eid, inst["instanceId"], member)
            if row["op"] == "deleted":
                assert g.get("deletedAt") and "urn:ngsi-ld:null" in (g.get("value"), g.get("object"), g.get("languageMap"),
                                                                     g.get("vocab"), g.get("json"))
        assert len(got) == len(rows), eid


def test_importing_again_refuses_every_record(migrated):
    args = [NODE, IMPORTER, "--dbDir", migrated["db"] + "-again", "--troe", "embdb", "--contextDir", migrated["contexts"],
            "--file", migrated["stream"]]
    imp = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert imp.returncode == 0, imp.stderr
    again = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1
    report = again.stderr.splitlines()[-6:]
    assert all(" 0 imported" in l for l in report[:5]), report
