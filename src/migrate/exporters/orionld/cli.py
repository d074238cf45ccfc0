"""Command line of the Orion-LD exporter: writes a broker-migration stream
(src/migrate/stream/STREAM.md) from a running Orion-LD deployment's MongoDB
and, with --troe, its TRoE history in PostgreSQL.

Exit status: 0 every record exported (what the format says is not exported is
reported on standard error, one line each); 1 some document or row could not
be converted (reported with its id, the export went on); 2 bad options, a
server that cannot be reached, or a requested tenant that does not exist
(nothing is written then).
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

# The stream contract's validator (src/migrate/stream/broker_migration.py), beside the exporters.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "stream"))
import broker_migration  # noqa: E402

from .common import ConvertError, NotExported, is_expanded
from . import current

SOURCE = "Orion-LD"
KINDS = ("registration", "entity", "subscription", "temporalEntity", "temporalInstance")


class Fatal(Exception):
    """Exit status 2."""


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="orionld-export",
        description="Export an Orion-LD deployment (MongoDB current state, TRoE history) "
                    "as a broker-migration stream (NDJSON).")
    p.add_argument("--mongo", default="mongodb://localhost:27017", help="MongoDB URI of the current state")
    p.add_argument("--db", default="orion", help="database-name prefix the deployment ran with")
    p.add_argument("--troe", default="none",
                   help="PostgreSQL connection string of the history server, without database name; "
                        "'none': no history (default)")
    p.add_argument("--troeDb", default=None, help="history database-name prefix (default: the --db prefix)")
    p.add_argument("--tenants", default=None,
                   help="comma-separated tenants ('default' or empty for the default tenant); default: all")
    p.add_argument("--noCurrent", action="store_true", help="leave the current state out (history only)")
    p.add_argument("--out", default="-", help="stream file (default: standard output)")
    p.add_argument("--timeout", type=float, default=5.0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.troeDb is None:
        args.troeDb = args.db
    args.troe = None if args.troe.strip().lower() in ("", "none") else args.troe
    if args.noCurrent and args.troe is None:
        p.error("--noCurrent leaves nothing to export without --troe")
    return args


class Output:
    """Writes the stream; counts; shows progress when standard error is a terminal."""

    def __init__(self, stream, err):
        self.stream = stream
        self.err = err
        self.counts = {k: 0 for k in KINDS}
        self.skipped = 0
        self.errors = 0
        self.started = time.monotonic()
        self.tty = err.isatty()
        self.last_progress = 0.0

    def write(self, record):
        # What is written keeps the stream contract (src/migrate/stream): a record that does not is an error
        # named on standard error, never a line the importer would refuse.
        problems = broker_migration.validate_record(record)
        if problems:
            data = record.get("data", {})
            self.report("error", "%s %s is not valid by the stream contract (%s): not exported"
                        % (record["kind"], data.get("id", ""), "; ".join(problems)))
            return
        self.stream.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        kind = record["kind"]
        if kind in self.counts:
            self.counts[kind] += 1
            if self.tty:
                now = time.monotonic()
                if now - self.last_progress >= 0.5:
                    self.last_progress = now
                    self.err.write("\r" + self.summary(now) + "\033[K")
                    self.err.flush()

    def report(self, kind, message):
        if kind == "error":
            self.errors += 1
            prefix = "error"
        else:
            self.skipped += 1
            prefix = "not exported"
        if self.tty:
            self.err.write("\r\033[K")
        self.err.write("%s: %s\n" % (prefix, message))
        self.err.flush()

    def summary(self, now=None):
        secs = (now or time.monotonic()) - self.started
        total = sum(self.counts.values())
        rate = total / secs if secs > 0 else 0.0
        parts = ", ".join("%s %d" % (k, n) for k, n in self.counts.items())
        return "%s; %d records in %.1f s (%.0f/s)" % (parts, total, secs, rate)

    def final(self):
        if self.tty:
            self.err.write("\r\033[K")
        self.err.write("exported: %s; not exported: %d; errors: %d\n"
                       % (self.summary(), self.skipped, self.errors))
        self.err.flush()


def tenant_of(name, prefix, sep):
    """'' for the default tenant's database, the tenant for prefix+sep+tenant, else None."""
    if name == prefix:
        return ""
    if name.startswith(prefix + sep) and len(name) > len(prefix) + 1:
        return name[len(prefix) + 1:]
    return None


def requested_tenants(spec):
    if spec is None:
        return None
    out = []
    for t in spec.split(","):
        t = t.strip()
        out.append("" if t in ("", "default") else t)
    return out


def connect_mongo(args):
    try:
        import pymongo
        from pymongo.errors import PyMongoError
    except ImportError as e:
        raise Fatal("pymongo is not installed (%s): pip install -r requirements.txt" % e)
    try:
        client = pymongo.MongoClient(args.mongo, serverSelectionTimeoutMS=int(args.timeout * 1000),
                                     connectTimeoutMS=int(args.timeout * 1000), tz_aware=True)
        client.admin.command("ping")
        names = client.list_database_names()
    except (PyMongoError, ValueError) as e:
        raise Fatal("cannot reach MongoDB at %s: %s" % (redact(args.mongo), _one_line(str(e).split(", Timeout")[0])))
    return client, names


def troe_conninfo(args, dbname):
    from psycopg.conninfo import make_conninfo
    return make_conninfo(args.troe, dbname=dbname, connect_timeout=max(1, int(args.timeout)))


def connect_troe(args, dbname):
    try:
        import psycopg
    except ImportError as e:
        raise Fatal("psycopg is not installed (%s): pip install -r requirements.txt" % e)
    try:
        return psycopg.connect(troe_conninfo(args, dbname))
    except psycopg.Error as e:
        raise Fatal("cannot reach PostgreSQL at %s (database %s): %s" % (redact(args.troe), dbname, _one_line(e)))
    except Exception as e:   # a malformed connection string
        raise Fatal("bad --troe connection string %r: %s" % (redact(args.troe), _one_line(e)))


def troe_databases(args):
    """The databases of the history server. pg_database is a shared catalog: any database lists it, so the one
    of the prefix is asked first (a user of the deployment may lack access to 'postgres')."""
    conn = None
    for dbname in dict.fromkeys((args.troeDb, "postgres")):
        try:
            conn = connect_troe(args, dbname)
            break
        except Fatal as e:
            failure = e
    if conn is None:
        raise failure
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT datname FROM pg_database WHERE NOT datistemplate")
            return [r[0] for r in cur.fetchall()]
    finally:
        conn.close()


def troe_database_exists(args, dbname):
    import psycopg
    try:
        psycopg.connect(troe_conninfo(args, dbname)).close()
        return True
    except psycopg.OperationalError as e:
        if "does not exist" in str(e):
            return False
        raise Fatal("cannot reach PostgreSQL at %s (database %s): %s" % (redact(args.troe), dbname, _one_line(e)))


def mongo_db_name(args, tenant):
    return args.db if tenant == "" else "%s-%s" % (args.db, tenant)


def troe_db_name(args, tenant):
    return args.troeDb if tenant == "" else "%s_%s" % (args.troeDb, tenant)


def export(args, out):
    mongo_tenants, troe_tenants = set(), set()
    client = None
    if not args.noCurrent or args.troe is not None:
        # the current state also tells history rows their entity type
        try:
            client, names = connect_mongo(args)
            mongo_tenants = {t for t in (tenant_of(n, args.db, "-") for n in names) if t is not None}
        except Fatal:
            if not args.noCurrent:
                raise
            client = None
    wanted = requested_tenants(args.tenants)
    if args.troe is not None:
        if wanted is not None:
            # The tenants named: their databases are opened by name, nothing else of the server is read.
            troe_tenants = {t for t in wanted if troe_database_exists(args, troe_db_name(args, t))}
        else:
            troe_tenants = {t for t in (tenant_of(n, args.troeDb, "_") for n in troe_databases(args))
                            if t is not None}
            if not troe_tenants:
                raise Fatal("--troeDb %s names no database on the history server (neither %s nor %s_<tenant>)"
                            % (args.troeDb, args.troeDb, args.troeDb))
    if not args.noCurrent and wanted is None and client is not None and not mongo_tenants:
        raise Fatal("--db %s names no database on the MongoDB server (neither %s nor %s-<tenant>)"
                    % (args.db, args.db, args.db))
    available = (set() if args.noCurrent else mongo_tenants) | troe_tenants
    if wanted is None:
        tenants = sorted(available)
    else:
        missing = [t for t in wanted if t not in available]
        if missing:
            raise Fatal("tenant %s does not exist (no MongoDB database %s%s)" % (
                ", ".join(json.dumps(t or "default") for t in missing),
                ", ".join(mongo_db_name(args, t) for t in missing),
                "" if args.troe is None else " nor PostgreSQL database " +
                ", ".join(troe_db_name(args, t) for t in missing)))
        tenants = list(dict.fromkeys(wanted))

    out.write({"kind": "header", "format": "broker-migration", "version": 1, "source": SOURCE})

    def emit(kind, tenant, data):
        rec = {"kind": kind}
        if tenant:
            rec["tenant"] = tenant
        rec["data"] = data
        out.write(rec)

    def convert_all(tenant, collection, kind, convert):
        db = client[mongo_db_name(args, tenant)]
        for doc in db[collection].find({}, batch_size=500).sort("_id", 1):
            try:
                emit(kind, tenant, convert(doc))
            except NotExported as e:
                out.report("skip", "%s%s" % (_t(tenant), e))
            except ConvertError as e:
                out.report("error", "%s%s: not exported" % (_t(tenant), e))

    if not args.noCurrent:
        current_tenants = [t for t in tenants if t in mongo_tenants]
        # registrations first (the importer checks entities against them)
        for tenant in current_tenants:
            convert_all(tenant, "registrations", "registration", current.convert_registration)
        for tenant in current_tenants:
            convert_all(tenant, "entities", "entity", current.convert_entity)
            convert_all(tenant, "csubs", "subscription", current.convert_subscription)
            db = client[mongo_db_name(args, tenant)]
            if "casubs" in db.list_collection_names():
                for doc in db["casubs"].find({}, {"_id": 1}, batch_size=500):
                    out.report("skip", "%scasubs document %s (the casubs collection)"
                               % (_t(tenant), doc.get("_id")))
    if args.troe is not None:
        from .history import HistoryReader
        for tenant in tenants:
            if tenant not in troe_tenants:
                continue
            conn = connect_troe(args, troe_db_name(args, tenant))
            try:
                type_lookup = _type_lookup(client, mongo_db_name(args, tenant) if tenant in mongo_tenants else None)
                reader = HistoryReader(conn, tenant, type_lookup,
                                       lambda kind, msg, t=tenant: out.report(kind, _t(t) + msg))
                from .history import _table_exists
                if not _table_exists(conn, "entities") or not _table_exists(conn, "attributes"):
                    out.report("error", "%sdatabase %s has no TRoE tables: its history is not exported"
                               % (_t(tenant), troe_db_name(args, tenant)))
                    continue
                with conn.transaction():
                    for kind, data in reader.records():
                        if not is_expanded(data["type"]):
                            out.report("error", "%shistory of entity %s: type %s is not expanded: not exported"
                                       % (_t(tenant), data["id"], json.dumps(data["type"])))
                            continue
                        emit(kind, tenant, data)
            finally:
                conn.close()


_URI_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]*@")
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def redact(text):
    """Text with the passwords of connection strings (URI user:password@, key=value password=) written ***."""
    if text is None:
        return text
    return _KV_PASSWORD.sub(r"\1***", _URI_PASSWORD.sub(r"\1***@", str(text)))


def _secrets(args):
    """The passwords --mongo and --troe carry, to take out of any message (a driver may repeat them)."""
    out = []
    for uri in (args.mongo, args.troe):
        if not uri:
            continue
        m = re.search(r"://[^:/@\s]*:([^@\s]+)@", uri) or re.search(r"password\s*=\s*'?([^'\s]+)", uri, re.IGNORECASE)
        if m:
            out.append(m.group(1))
            try:
                from urllib.parse import unquote
                out.append(unquote(m.group(1)))
            except Exception:
                pass
    return [x for x in dict.fromkeys(out) if len(x) >= 1]


def _one_line(e):
    return "; ".join(l.strip() for l in str(e).strip().splitlines() if l.strip())


def _t(tenant):
    return "tenant %s: " % tenant if tenant else ""


def _type_lookup(client, dbname):
    cache = {}

    def lookup(eid):
        if client is None or dbname is None:
            return None
        if eid not in cache:
            if len(cache) > 10000:
                cache.clear()
            doc = client[dbname]["entities"].find_one({"_id.id": eid}, {"_id": 1})
            t = doc["_id"].get("type") if doc and isinstance(doc.get("_id"), dict) else None
            cache[eid] = t if isinstance(t, str) else None
        return cache[eid]
    return lookup


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    err = sys.stderr
    secrets = _secrets(args)

    def say(text):
        text = redact(text)
        for secret in secrets:
            text = text.replace(secret, "***")
        err.write(text)

    tmp = None
    try:
        stream = sys.stdout if args.out == "-" else None
        out = None
        try:
            if stream is None:
                # Written next to --out and renamed over it at the end: an export that stops (exit 2, a server lost)
                # leaves --out as it was, never emptied nor partial.
                try:
                    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(args.out), suffix=".tmp",
                                               dir=os.path.dirname(os.path.abspath(args.out)))
                    stream = os.fdopen(fd, "w", encoding="utf-8")
                except OSError as e:
                    raise Fatal("cannot write %s: %s" % (args.out, e))
            out = Output(stream, err)
            export(args, out)
        finally:
            if stream is not None and stream is not sys.stdout:
                stream.close()
            else:
                sys.stdout.flush()
        if tmp is not None:
            os.replace(tmp, args.out)
            tmp = None
    except BrokenPipeError:
        # The reader went away (a pipe into head): no traceback, no more output.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, AttributeError, ValueError):   # a stdout that is no file
            pass
        return 1
    except Fatal as e:
        say("error: %s\n" % e)
        return 2
    except KeyboardInterrupt:
        say("error: interrupted\n")
        return 2
    except Exception as e:   # a server that went away during the export
        name = type(e).__module__ + "." + type(e).__name__
        if name.startswith(("pymongo", "psycopg")):
            say("error: database error during the export: %s\n" % e)
            return 2
        raise
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    out.final()
    return 1 if out.errors else 0
