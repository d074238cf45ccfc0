#!/usr/bin/env python3
"""Loads test/fixtures/orionld into the test servers, under a database prefix.

MongoDB (FerretDB in the tests): mongo.json, database 'orion...' renamed to
'<prefix>...'.  PostgreSQL: troe/schema.sql then troe/orion.sql into database
<prefix>, troe/orion_<tenant>.sql into <prefix>_<tenant>.  Databases of the
prefix are dropped first, so loading twice gives the same state.

    python3 load_fixtures.py [--prefix ldbexp]   (MONGO_URL and TROE_URL from the environment
                                                  or <repo>/.services/*.env)
"""
import argparse
import glob
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURES = os.path.join(REPO, "test", "fixtures", "orionld")
DEFAULT_PREFIX = "ldbexp"


def service_env():
    """MONGO_URL and TROE_URL: the environment first, else the files the services scripts write."""
    env = {}
    for name in ("ferretdb.env", "postgres.env"):
        path = os.path.join(REPO, ".services", name)
        if os.path.exists(path):
            for line in open(path, encoding="utf-8"):
                line = line.strip()
                if line.startswith("export "):
                    k, _, v = line[len("export "):].partition("=")
                    env[k] = v
    for k in ("MONGO_URL", "TROE_URL"):
        if os.environ.get(k):
            env[k] = os.environ[k]
    return env


def rename(dbname, prefix):
    assert dbname == "orion" or dbname.startswith(("orion-", "orion_")), dbname
    return prefix + dbname[len("orion"):]


def load_mongo(mongo_url, prefix):
    import pymongo
    from bson import json_util
    with open(os.path.join(FIXTURES, "mongo.json"), encoding="utf-8") as f:
        data = json_util.loads(f.read())
    client = pymongo.MongoClient(mongo_url, serverSelectionTimeoutMS=5000)
    for name in client.list_database_names():
        if name == prefix or name.startswith(prefix + "-"):
            client.drop_database(name)
    for dbname, collections in data.items():
        if dbname.startswith("_"):
            continue
        db = client[rename(dbname, prefix)]
        for coll, docs in collections.items():
            db.create_collection(coll)
            if docs:
                db[coll].insert_many(docs, ordered=True)
    client.close()


def load_troe(troe_url, prefix):
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo
    schema = open(os.path.join(FIXTURES, "troe", "schema.sql"), encoding="utf-8").read()
    with psycopg.connect(make_conninfo(troe_url, dbname="postgres"), autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database").fetchall()
        for (name,) in rows:
            if name == prefix or name.startswith(prefix + "_"):
                conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        files = sorted(glob.glob(os.path.join(FIXTURES, "troe", "orion*.sql")))
        for path in files:
            dbname = rename(os.path.basename(path)[:-len(".sql")], prefix)
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    for path in files:
        dbname = rename(os.path.basename(path)[:-len(".sql")], prefix)
        with psycopg.connect(make_conninfo(troe_url, dbname=dbname), autocommit=True) as conn:
            conn.execute(schema)
            conn.execute(open(path, encoding="utf-8").read())


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prefix", default=DEFAULT_PREFIX)
    args = p.parse_args(argv)
    env = service_env()
    if not env.get("MONGO_URL") or not env.get("TROE_URL"):
        sys.exit("MONGO_URL / TROE_URL unknown: start test/services/ferretdb.sh and test/services/postgres.sh")
    load_mongo(env["MONGO_URL"], args.prefix)
    load_troe(env["TROE_URL"], args.prefix)
    print("fixtures loaded under prefix %s (MongoDB %s, PostgreSQL %s)" % (args.prefix, env["MONGO_URL"], env["TROE_URL"]))


if __name__ == "__main__":
    main(sys.argv[1:])
