"""History: Orion-LD's TRoE tables (entities, attributes, subAttributes) to
temporalEntity / temporalInstance records.

Read with server-side cursors, both tables ordered by entity id (byte order),
merged entity by entity: memory holds one entity's entity rows and one
attribute instance's Sub-Attribute rows, never a table.

Row shapes (Orion-LD's TRoE schema): attribute and Sub-Attribute names keep
'=' for the dots of the IRI; the default instance has datasetId 'None'; a
deleted entity's row has type 'NULL'; values sit in the column their
valueType names (text, number, boolean, datetime, compound, geo*).
"""
import json

from .common import ConvertError, db_name_to_iri, decode_forbidden, iso

ENTITY_OPS = {"Create": "created", "Append": "created", "Replace": "replaced", "Delete": "deleted"}
INSTANCE_OPS = {"Create": "created", "Append": "created", "Update": "modified",
                "Replace": "replaced", "Delete": "deleted"}
GEO_COLUMNS = ("geoPoint", "geoMultiPoint", "geoPolygon", "geoMultiPolygon", "geoLineString",
               "geoMultiLineString")
GEO_TYPES = {"GeoPoint", "GeoMultiPoint", "GeoPolygon", "GeoMultiPolygon", "GeoLineString",
             "GeoMultiLineString"}
VALUE_COLUMNS = ("observedAt", "unitCode", "valueType", "text", "boolean", "number", "datetime", "compound")


def _columns(conn, table):
    with conn.cursor() as cur:
        cur.execute("SELECT lower(column_name) FROM information_schema.columns "
                    "WHERE table_schema = current_schema() AND lower(table_name) = lower(%s)", (table,))
        return {r[0] for r in cur.fetchall()}


def _table_exists(conn, table):
    return bool(_columns(conn, table))


def _select(cols, alias, names):
    """Column expressions for names; NULL for columns an older schema lacks."""
    out = []
    for name in names:
        if name.lower() not in cols:
            out.append("NULL")
        elif name in GEO_COLUMNS:
            out.append("ST_AsGeoJSON(%s.%s)" % (alias, name))
        elif name == "valueType" or name == "opMode":
            out.append("%s.%s::text" % (alias, name))
        else:
            out.append("%s.%s" % (alias, name))
    return out


def _value_of(row, what):
    """(type, member, value) of a TRoE value, by its valueType."""
    vt = row["valueType"]
    if vt == "Relationship":
        return "Relationship", "object", row["text"]
    if vt == "String":
        return "Property", "value", decode_forbidden(row["text"])
    if vt == "Number":
        n = row["number"]
        if n is None:
            raise ConvertError("%s: Number without number" % what)
        n = float(n)
        if n != n or n in (float("inf"), float("-inf")):
            raise ConvertError("%s: the number %r cannot be converted to JSON" % (what, n))
        return "Property", "value", int(n) if n.is_integer() else n
    if vt == "Boolean":
        return "Property", "value", row["boolean"]
    if vt == "DateTime":
        if row["datetime"] is None:
            raise ConvertError("%s: DateTime without datetime" % what)
        return "Property", "value", {"@type": "DateTime", "@value": iso(row["datetime"])}
    if vt == "Compound":
        return "Property", "value", decode_forbidden(row["compound"])
    if vt == "LanguageMap":
        if not isinstance(row["compound"], dict):
            raise ConvertError("%s: LanguageMap without a language map" % what)
        return "LanguageProperty", "languageMap", decode_forbidden(row["compound"])
    if vt in GEO_TYPES:
        geo = next((row[c] for c in GEO_COLUMNS if row.get(c)), None)
        if geo is None:
            raise ConvertError("%s: %s without geometry" % (what, vt))
        return "GeoProperty", "value", json.loads(geo)
    raise ConvertError("%s: unknown valueType %s" % (what, json.dumps(vt)))


def _instance_members(row, what, out):
    typ, member, value = _value_of(row, what)
    if value is None:
        raise ConvertError("%s: %s without a value" % (what, row["valueType"]))
    out["type"] = typ
    out[member] = value
    if row.get("observedAt") is not None:
        out["observedAt"] = iso(row["observedAt"])
    if row.get("unitCode") is not None:
        out["unitCode"] = row["unitCode"]


class HistoryReader:
    """Reads one tenant's TRoE database; yields records and reports problems."""

    def __init__(self, conn, tenant, type_lookup, report):
        self.conn = conn
        self.tenant = tenant
        self.type_lookup = type_lookup    # entity id -> type from the current state, or None
        self.report = report              # report(kind, message): kind 'error' or 'skip'

    def _entity_rows(self):
        cols = _columns(self.conn, "entities")
        sel = ", ".join(_select(cols, "e", ("instanceId", "ts", "opMode", "id", "type")))
        cur = self.conn.cursor(name="ldb_entities")
        cur.itersize = 2000
        cur.execute("SELECT %s FROM entities e ORDER BY e.id COLLATE \"C\", e.ts, e.instanceId" % sel)
        for r in cur:
            yield {"instanceId": r[0], "ts": r[1], "opMode": r[2], "id": r[3], "type": r[4]}
        cur.close()

    def _attribute_rows(self):
        acols = _columns(self.conn, "attributes")
        scols = _columns(self.conn, "subattributes")
        anames = ("entityId", "instanceId", "id", "opMode", "datasetId", "ts") + VALUE_COLUMNS + GEO_COLUMNS
        snames = ("instanceId", "id", "ts") + VALUE_COLUMNS + GEO_COLUMNS
        sel = _select(acols, "a", anames)
        if scols:
            sel += _select(scols, "s", snames)
            join_ds = " AND s.attrDatasetId = a.datasetId" if "attrdatasetid" in scols else ""
            join = "LEFT JOIN subAttributes s ON s.attrInstanceId = a.instanceId" + join_ds
            order = ", s.ts, s.instanceId"
        else:
            sel += ["NULL"] * len(snames)
            join, order = "", ""
        cur = self.conn.cursor(name="ldb_attributes")
        cur.itersize = 2000
        cur.execute("SELECT %s FROM attributes a %s ORDER BY a.entityId COLLATE \"C\", a.ts, a.instanceId, "
                    "a.datasetId%s" % (", ".join(sel), join, order))
        na = len(anames)
        for r in cur:
            a = dict(zip(anames, r[:na]))
            s = dict(zip(snames, r[na:]))
            yield a, (s if s["instanceId"] is not None else None)
        cur.close()

    @staticmethod
    def _grouped(rows, key):
        group, current = [], None
        for row in rows:
            k = key(row)
            if group and k != current:
                yield current, group
                group = []
            current = k
            group.append(row)
        if group:
            yield current, group

    def _attribute_instances(self, rows):
        """Rows of one entity (attribute row, sub row) -> [(attr row, [sub rows])]."""
        inst, subs, key = None, [], None
        for a, s in rows:
            k = (a["instanceId"], a["datasetId"], a["ts"])
            if inst is not None and k != key:
                yield inst, subs
                subs = []
            inst, key = a, k
            if s is not None:
                subs.append(s)
        if inst is not None:
            yield inst, subs

    def records(self):
        """Yields (kind, data) in stream order for the whole tenant."""
        ents = self._grouped(self._entity_rows(), lambda r: r["id"])
        attrs = self._grouped(self._attribute_rows(), lambda r: r[0]["entityId"])
        e_next = next(ents, None)
        a_next = next(attrs, None)
        while e_next is not None or a_next is not None:
            if a_next is None or (e_next is not None and e_next[0] <= a_next[0]):
                eid, erows = e_next
                arows = []
                if a_next is not None and a_next[0] == eid:
                    arows = a_next[1]
                    a_next = next(attrs, None)
                e_next = next(ents, None)
            else:
                eid, arows = a_next
                erows = []
                a_next = next(attrs, None)
            yield from self._entity_records(eid, erows, arows)

    def _entity_records(self, eid, erows, arows):
        known = [r["type"] for r in erows if r["type"] not in (None, "", "NULL")]
        etype = known[-1] if known else self.type_lookup(eid)
        if etype is None:
            self.report("skip", "history of entity %s (%d entity rows, %d attribute rows): its type is known "
                        "neither by history nor current state" % (eid, len(erows), len(arows)))
            return
        for r in erows:
            what = "history of entity %s, entities row %s" % (eid, r["instanceId"])
            op = ENTITY_OPS.get(r["opMode"])
            if op is None:
                # an entity-level Update: its attribute rows carry the change
                self.report("skip", "%s: operation mode %s has no temporalEntity op"
                            % (what, json.dumps(r["opMode"])))
                continue
            typ = r["type"] if r["type"] not in (None, "", "NULL") else etype
            yield "temporalEntity", {"id": eid, "type": typ, "op": op, "at": iso(r["ts"])}
        seen_ids = set()
        for a, subs in self._attribute_instances(arows):
            what = "history of entity %s, attributes row %s" % (eid, a["instanceId"])
            try:
                yield "temporalInstance", self._instance(eid, etype, a, subs, seen_ids, what)
            except ConvertError as e:
                self.report("error", "%s: not exported" % e)

    def _instance(self, eid, etype, a, subs, seen_ids, what):
        op = INSTANCE_OPS.get(a["opMode"])
        if op is None:
            raise ConvertError("%s: unknown operation mode %s" % (what, json.dumps(a["opMode"])))
        at = iso(a["ts"])
        instance_id = a["instanceId"]
        dataset = a["datasetId"] if a["datasetId"] not in (None, "None") else None
        if instance_id in seen_ids:
            # one deletion of every dataset shares an instanceId; the stream's are unique
            instance_id = "%s:%s" % (instance_id, dataset or "default")
        seen_ids.add(instance_id)
        inst = {"instanceId": instance_id, "createdAt": at, "modifiedAt": at}
        if dataset is not None:
            inst["datasetId"] = dataset
        if op == "deleted":
            inst["deletedAt"] = at
        else:
            _instance_members(a, what, inst)
            for s in subs:
                swhat = "%s, subAttributes row %s" % (what, s["instanceId"])
                sub = {}
                _instance_members(s, swhat, sub)
                sat = iso(s["ts"])
                sub["createdAt"] = sat
                sub["modifiedAt"] = sat
                inst[db_name_to_iri(s["id"])] = sub
        return {"id": eid, "type": etype, "attr": db_name_to_iri(a["id"]), "op": op, "instance": inst}
