"""Streaming: a larger source exports with bounded memory; progress is shown on a terminal."""
import os
import pty
import subprocess
import sys

import pytest

from conftest import EXPORTER

VOLUME_PREFIX = "ldbvol"
ENTITIES = 3000
ROWS_PER_ENTITY = 20


@pytest.fixture(scope="module")
def volume(services):
    import pymongo
    import psycopg
    from psycopg.conninfo import make_conninfo
    client = pymongo.MongoClient(services["MONGO_URL"])
    client.drop_database(VOLUME_PREFIX)
    db = client[VOLUME_PREFIX]
    big = "x" * 2000
    docs = ({"_id": {"id": "urn:ngsi-ld:V:%06d" % i, "type": "https://example.org/V", "servicePath": "/"},
             "attrNames": ["https://example.org/p"],
             "attrs": {"https://example=org/p": {"type": "Property", "value": big, "creDate": 1.0, "modDate": 2.0,
                                                 "mdNames": []}},
             "creDate": 1.0, "modDate": 2.0, "lastCorrelator": ""} for i in range(ENTITIES))
    batch = []
    for d in docs:
        batch.append(d)
        if len(batch) == 500:
            db.entities.insert_many(batch)
            batch = []
    client.close()
    schema = open(os.path.join(os.path.dirname(EXPORTER), "..", "..", "..", "..", "test", "fixtures", "orionld",
                               "troe", "schema.sql"), encoding="utf-8").read()
    with psycopg.connect(make_conninfo(services["TROE_URL"], dbname="postgres"), autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % VOLUME_PREFIX)
        conn.execute("CREATE DATABASE %s" % VOLUME_PREFIX)
    with psycopg.connect(make_conninfo(services["TROE_URL"], dbname=VOLUME_PREFIX), autocommit=True) as conn:
        conn.execute(schema)
        conn.execute("""INSERT INTO entities SELECT 'urn:e:' || g, timestamp '2024-01-01' + g * interval '1 s',
                        'Create', 'urn:ngsi-ld:V:' || lpad(g::text, 6, '0'), 'https://example.org/V'
                        FROM generate_series(0, %d) g""" % (ENTITIES - 1))
        conn.execute("""INSERT INTO attributes (instanceId, id, opMode, entityId, datasetId, valueType, text, ts)
                        SELECT 'urn:a:' || g, 'https://example=org/p', 'Update',
                               'urn:ngsi-ld:V:' || lpad((g %% %d)::text, 6, '0'), 'None', 'String', repeat('y', 500),
                               timestamp '2024-01-02' + g * interval '1 s'
                        FROM generate_series(0, %d) g""" % (ENTITIES, ENTITIES * ROWS_PER_ENTITY - 1))
    return services


def test_large_export_streams_in_bounded_memory(volume, tmp_path):
    out = tmp_path / "big.ndjson"
    # The exporter runs under a fresh parent that reports its children's peak RSS: this process's own
    # RUSAGE_CHILDREN also holds earlier children (service start-up, a FerretDB build), which say nothing here.
    measure = ("import resource, subprocess, sys\n"
               "r = subprocess.run(sys.argv[1:])\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
               "sys.exit(r.returncode)\n")
    proc = subprocess.run([sys.executable, "-c", measure, sys.executable, EXPORTER, "--mongo", volume["MONGO_URL"],
                           "--db", VOLUME_PREFIX, "--troe", volume["TROE_URL"], "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("exported: registration 0, entity %d, subscription 0, temporalEntity %d, temporalInstance %d;"
                           % (ENTITIES, ENTITIES, ENTITIES * ROWS_PER_ENTITY)), last
    size = out.stat().st_size
    assert size > 30 * 1024 * 1024   # the stream is far larger than ...
    peak_kb = int(proc.stdout.strip().splitlines()[-1])
    # ... what the exporter ever held (ru_maxrss in KiB; the interpreter and drivers take ~40 MiB)
    assert peak_kb < 120 * 1024, "peak RSS %d KiB for a %d byte stream" % (peak_kb, size)
    # each entity's temporalEntity precedes its instances, entity by entity
    with open(out, encoding="utf-8") as f:
        import json
        seen = set()
        for line in f:
            r = json.loads(line)
            if r["kind"] == "temporalInstance":
                seen.add(r["data"]["id"])
            elif r["kind"] == "temporalEntity":
                assert r["data"]["id"] not in seen


def test_progress_on_a_terminal(loaded):
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, EXPORTER, "--mongo", loaded["MONGO_URL"], "--db", "ldbexp",
                             "--tenants", "t1"], stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    text = b"".join(chunks).decode()
    assert "\r" in text                      # the progress line is rewritten in place
    assert "records in" in text and "/s)" in text   # counts per kind and the rate
    assert text.rstrip().splitlines()[-1].lstrip("\r\x1b[K").startswith("exported: registration 0, entity 1")


def test_no_progress_when_stderr_is_not_a_terminal(loaded, export):
    run = export("--mongo", loaded["MONGO_URL"], "--db", "ldbexp", "--tenants", "t1")
    assert "\r" not in run.stderr
    assert len(run.errlines) == 1 and run.errlines[0].startswith("exported: ")
