"""Current state: Orion-LD's MongoDB documents (entities, csubs, registrations)
to stream records.  Reads both of Orion-LD's storage layouts:

- the legacy write path (mongoBackend): attributes with creDate/modDate, a
  "value", metadata in "md" (observedAt/unitCode as {"value": x}, Sub-Attributes
  as {"type", "value"} possibly without timestamps), dataset instances in
  "@datasets" as one object or an array, timestamps possibly integral;
- the mongoc write path (dbModel*): the same attribute shape with Sub-Attribute
  createdAt/modifiedAt, and "@datasets" instances kept close to the API shape
  (createdAt/modifiedAt, observedAt and unitCode as plain members, the value
  under "value" or under the API's own member, Sub-Attributes as members).

NGSIv2-written documents may share the collections: an entity whose type is
not an expanded name, and a csubs document with an ObjectId _id, are not
exported (NotExported); an attribute of a type NGSI-LD does not know makes the
entity a ConvertError.
"""
import json

from .common import ConvertError, NotExported, db_name_to_iri, decode_forbidden, is_expanded, plain, timestamp

# stored attribute type -> (NGSI-LD type, member holding the value)
ATTR_TYPES = {
    "Property": ("Property", "value"),
    "GeoProperty": ("GeoProperty", "value"),
    "Relationship": ("Relationship", "object"),
    "LanguageProperty": ("LanguageProperty", "languageMap"),
    "VocabularyProperty": ("VocabProperty", "vocab"),   # Orion-LD's name
    "VocabProperty": ("VocabProperty", "vocab"),
    "JsonProperty": ("JsonProperty", "json"),
    "ListProperty": ("ListProperty", "valueList"),
    "ListRelationship": ("ListRelationship", "objectList"),
}
VALUE_KEYS = ("value", "object", "languageMap", "vocab", "json", "valueList", "objectList")
OBSERVED_AT = ("observedAt", "https://uri.etsi.org/ngsi-ld/observedAt", "https://uri=etsi=org/ngsi-ld/observedAt")
UNIT_CODE = ("unitCode", "https://uri.etsi.org/ngsi-ld/unitCode", "https://uri=etsi=org/ngsi-ld/unitCode")
# members of a stored attribute instance that are not Sub-Attributes
INSTANCE_KEYS = frozenset(VALUE_KEYS + OBSERVED_AT + UNIT_CODE + (
    "type", "creDate", "modDate", "createdAt", "modifiedAt", "md", "mdNames", ".added", ".removed",
    "datasetId", "lang", "https://uri.etsi.org/ngsi-ld/createdAt", "https://uri.etsi.org/ngsi-ld/modifiedAt",
    "https://uri=etsi=org/ngsi-ld/createdAt", "https://uri=etsi=org/ngsi-ld/modifiedAt"))
ENTITY_SKIP = frozenset(["_id", "attrNames", "attrs", "creDate", "modDate", "lastCorrelator", "location",
                         "@datasets", "expDate", "observationSpace", "operationSpace"])


def _meta_scalar(stored, what):
    """observedAt / unitCode in md: {"value": x} (or {"type": .., "value": x}) or x."""
    if isinstance(stored, dict):
        if "value" not in stored:
            raise ConvertError("%s: no value" % what)
        return stored["value"]
    return stored


def _value(out_type, member, raw, what):
    val = plain(raw, what)
    if out_type == "GeoProperty":
        if isinstance(val, str):           # GeoJSON kept as a string
            try:
                val = json.loads(val)
            except ValueError:
                raise ConvertError("%s: GeoProperty value is not GeoJSON" % what)
        if not isinstance(val, dict) or "type" not in val:
            raise ConvertError("%s: GeoProperty value is not GeoJSON" % what)
    elif out_type == "Relationship":
        if not isinstance(val, (str, list)) or not val:
            raise ConvertError("%s: Relationship object %r is not a URI" % (what, val))
    elif out_type == "LanguageProperty":
        if not isinstance(val, dict):
            raise ConvertError("%s: LanguageProperty value is not a language map" % what)
    elif out_type == "VocabProperty":
        for v in (val if isinstance(val, list) else [val]):
            if not is_expanded(v):
                raise ConvertError("%s: vocab %r is not an expanded name" % (what, v))
    elif val is None:
        raise ConvertError("%s: null value" % what)
    if out_type in ("Property", "LanguageProperty", "ListProperty"):
        val = decode_forbidden(val)
    return val


def convert_instance(name, stored, parent_times, what):
    """One stored attribute (or Sub-Attribute) instance, either layout."""
    if not isinstance(stored, dict):
        raise ConvertError("%s: attribute %s is not an object" % (what, name))
    typ = stored.get("type")
    if typ not in ATTR_TYPES:
        raise ConvertError("%s: attribute %s has the unknown attribute type %s" % (what, name, json.dumps(typ)))
    out_type, member = ATTR_TYPES[typ]
    where = "%s: attribute %s" % (what, name)
    out = {"type": out_type}
    raw_key = next((k for k in VALUE_KEYS if k in stored), None)
    if raw_key is None:
        raise ConvertError("%s has no value" % where)
    out[member] = _value(out_type, member, stored[raw_key], where)

    created = next((stored[k] for k in ("creDate", "createdAt") if k in stored), None)
    modified = next((stored[k] for k in ("modDate", "modifiedAt") if k in stored), None)
    out["createdAt"] = timestamp(created, where + " createdAt") if created is not None else parent_times[0]
    out["modifiedAt"] = timestamp(modified, where + " modifiedAt") if modified is not None else parent_times[1]
    times = (out["createdAt"], out["modifiedAt"])
    if "datasetId" in stored:
        out["datasetId"] = plain(stored["datasetId"], where + " datasetId")
    if "lang" in stored and out_type == "Property":
        out["lang"] = plain(stored["lang"], where + " lang")

    subs = []
    md = stored.get("md")
    if md is not None and not isinstance(md, dict):
        raise ConvertError("%s: md is not an object" % where)
    for source in (md or {}, stored):
        for key, sub in source.items():
            if source is stored and key in INSTANCE_KEYS:
                # observedAt / unitCode as plain members (API-shaped dataset instances)
                if key in OBSERVED_AT:
                    out["observedAt"] = timestamp(_meta_scalar(sub, where + " observedAt"), where + " observedAt")
                elif key in UNIT_CODE:
                    out["unitCode"] = plain(_meta_scalar(sub, where + " unitCode"), where + " unitCode")
                continue
            if key in OBSERVED_AT:
                out["observedAt"] = timestamp(_meta_scalar(sub, where + " observedAt"), where + " observedAt")
            elif key in UNIT_CODE:
                out["unitCode"] = plain(_meta_scalar(sub, where + " unitCode"), where + " unitCode")
            elif key in ("createdAt", "modifiedAt", "creDate", "modDate"):
                continue
            else:
                subs.append((db_name_to_iri(key), sub))
    for sub_name, sub in subs:
        if not is_expanded(sub_name):
            raise ConvertError("%s: Sub-Attribute name %s is not expanded" % (where, json.dumps(sub_name)))
        out[sub_name] = convert_instance(sub_name, sub, times, "%s Sub-Attribute" % where)
    return out


def convert_entity(doc):
    _id = doc.get("_id")
    if not isinstance(_id, dict) or not isinstance(_id.get("id"), str):
        raise ConvertError("entity document %r: no _id.id" % (_id,))
    eid = _id["id"]
    what = "entity %s" % eid
    etype = _id.get("type")
    types = etype if isinstance(etype, list) else [etype]
    if not types or not all(is_expanded(t) for t in types):
        raise NotExported("%s: type %s is not an expanded name (an NGSIv2-written entity)"
                          % (what, json.dumps(etype)))
    if "creDate" not in doc or "modDate" not in doc:
        raise ConvertError("%s: no creDate/modDate" % what)
    out = {"id": eid, "type": etype,
           "createdAt": timestamp(doc["creDate"], what + " creDate"),
           "modifiedAt": timestamp(doc["modDate"], what + " modDate")}
    times = (out["createdAt"], out["modifiedAt"])
    attrs = doc.get("attrs") or {}
    datasets = doc.get("@datasets") or {}
    if not isinstance(attrs, dict) or not isinstance(datasets, dict):
        raise ConvertError("%s: attrs or @datasets is not an object" % what)
    consumed = set()

    def dataset_instances(key, name):
        found = []
        for k in (key, name):
            if k in datasets and k not in consumed:
                consumed.add(k)
                ds = datasets[k]
                found.extend(ds if isinstance(ds, list) else [ds])
        out_list = []
        for d in found:
            inst = convert_instance(name, d, times, what)
            if "datasetId" not in inst:
                raise ConvertError("%s: attribute %s: an @datasets instance without datasetId" % (what, name))
            out_list.append(inst)
        return out_list

    for key, stored in attrs.items():
        if key in (".added", ".removed"):
            continue
        name = db_name_to_iri(key)
        if not is_expanded(name):
            raise ConvertError("%s: attribute name %s is not expanded" % (what, json.dumps(name)))
        instances = [convert_instance(name, stored, times, what)] + dataset_instances(key, name)
        out[name] = instances if len(instances) > 1 else instances[0]
    for key in list(datasets):
        if key in consumed:
            continue
        name = db_name_to_iri(key)
        if not is_expanded(name):
            raise ConvertError("%s: attribute name %s is not expanded" % (what, json.dumps(name)))
        instances = dataset_instances(key, name)
        if name in out:   # both spellings of one name
            prev = out[name] if isinstance(out[name], list) else [out[name]]
            instances = prev + instances
        if instances:
            out[name] = instances if len(instances) > 1 else instances[0]
    return out


# ---------------------------------------------------------------- subscriptions

_Q_OPS = ("==", "!=", ">=", "<=", "~=", "!~=", ">", "<")


def _q_path(path):
    """A stored q attribute path (IRI dots as '=', '.value', '.md.') in stream form."""
    parts = path.split(".")
    if parts[:1] == ["attrs"]:
        parts = parts[1:]
    if len(parts) > 2 and parts[1] == "md":
        del parts[1]
    trailing = []
    for i, p in enumerate(parts):
        if i >= 1 and p in ("value", "object"):
            trailing, parts = parts[i + 1:], parts[:i]
            break
    text = ".".join(p.replace("=", "%2E") for p in parts)
    if trailing:   # a path into a compound value
        text += "[" + ".".join(trailing) + "]"
    return text


def convert_q(stored):
    """Orion-LD's ldQ (or legacy expression.q) to the stream's q.

    Stored: attribute IRIs with '=' for dots, '.value' after the attribute
    (".md.<sub>" for a Sub-Attribute), strings quoted as %22.  Stream: IRI dots
    as %2E, '.' only between attribute and Sub-Attribute, '"' quotes.
    A '=' in a path is an IRI dot unless it starts '=='.
    """
    out = []
    i, n = 0, len(stored)
    while i < n:
        c = stored[i]
        if c in "();|!":
            out.append(c)
            i += 1
            continue
        j = i
        while j < n and stored[j] not in "();|<>!~" and not stored.startswith("==", j):
            j += 1
        path = stored[i:j]
        bracket = ""
        if "[" in path:
            path, bracket = path[:path.index("[")], path[path.index("["):]
        out.append(_q_path(path) + bracket)
        if j < n and stored[j] not in "();|":
            op = next((o for o in sorted(_Q_OPS, key=len, reverse=True) if stored.startswith(o, j)), None)
            if op is None:
                raise ConvertError("q %r: no operator at position %d" % (stored, j))
            out.append(op)
            j += len(op)
            k = j
            in_string = False
            while k < n:
                if stored.startswith("%22", k):
                    in_string = not in_string
                    k += 3
                    continue
                if stored[k] == '"':
                    in_string = not in_string
                elif not in_string and stored[k] in ";|)":
                    break
                k += 1
            out.append(stored[j:k].replace("%22", '"'))
            j = k
        i = j
    return "".join(out)


def _subscription_q(doc, expr, what):
    """The first of the stored q forms (ldQ, q, the legacy expression.q) that becomes a valid NGSI-LD q; none that
    does is a ConvertError naming them (an invalid q would be written otherwise, and refused by the importer)."""
    tried = []
    for stored in dict.fromkeys(v for v in (doc.get("ldQ"), doc.get("q"), expr.get("q")) if isinstance(v, str) and v):
        try:
            q = convert_q(stored)
            problem = q_problem(q)
        except ConvertError as e:
            problem = str(e)
        if problem is None:
            return q
        tried.append("%r (%s)" % (stored, problem))
    if tried:
        raise ConvertError("%s: q cannot become an NGSI-LD q: %s" % (what, "; ".join(tried)))
    return None


_Q_VALUE_END = ";|)"


def q_problem(q):
    """None when q is an NGSI-LD q (CIM 009 v1.8 §4.9: terms joined by ';' and '|', parentheses, '!' before an
    attribute, an operator and a value) whose attribute names are expanded; else what is wrong."""
    pos = [0]
    n = len(q)

    def fail(msg):
        raise ConvertError("%s at position %d" % (msg, pos[0]))

    def expression():
        term()
        while pos[0] < n and q[pos[0]] in ";|":
            pos[0] += 1
            term()

    def term():
        if pos[0] < n and q[pos[0]] == "(":
            pos[0] += 1
            expression()
            if pos[0] >= n or q[pos[0]] != ")":
                fail("')' missing")
            pos[0] += 1
            return
        negated = pos[0] < n and q[pos[0]] == "!" and not q.startswith("!=", pos[0])
        if negated:
            pos[0] += 1
        start = pos[0]
        while pos[0] < n and q[pos[0]] not in "();|<>=!~":
            pos[0] += 1
        path = q[start:pos[0]]
        if path == "":
            fail("an attribute is missing")
        name = path.split("[")[0]
        for part in name.split("."):
            if not is_expanded(part.replace("%2E", ".")):
                fail("%s is not an expanded name" % json.dumps(part.replace("%2E", ".")))
        op = next((o for o in sorted(_Q_OPS, key=len, reverse=True) if q.startswith(o, pos[0])), None)
        if op is None:
            return
        if negated:
            fail("'!' before a comparison")
        pos[0] += len(op)
        start = pos[0]
        in_string = False
        while pos[0] < n and (in_string or q[pos[0]] not in _Q_VALUE_END):
            if q[pos[0]] == '"':
                in_string = not in_string
            pos[0] += 1
        if in_string:
            fail("a string is not closed")
        if pos[0] == start:
            fail("a value is missing after %s" % op)

    try:
        expression()
        if pos[0] != n:
            fail("unexpected %r" % q[pos[0]])
    except ConvertError as e:
        return str(e)
    return None


def _selectors(entities, what):
    out = []
    for e in entities or []:
        if not isinstance(e, dict):
            raise ConvertError("%s: entities item is not an object" % what)
        sel = {}
        eid = e.get("id")
        pattern = str(e.get("isPattern", "false")).lower() == "true"
        if eid:
            if pattern:
                if eid != ".*":
                    sel["idPattern"] = eid
            else:
                sel["id"] = eid
        if "idPattern" in e:
            sel["idPattern"] = e["idPattern"]
        if "type" in e:
            if not is_expanded(e["type"]):
                raise ConvertError("%s: entity type %s is not expanded" % (what, json.dumps(e["type"])))
            sel["type"] = e["type"]
        out.append(sel)
    return out


def _names(values, what, member):
    out = []
    for v in values or []:
        if not is_expanded(v):
            raise ConvertError("%s: %s name %s is not expanded" % (what, member, json.dumps(v)))
        out.append(v)
    return out


def _key_values(obj, what):
    if isinstance(obj, list):   # already key/value pairs
        return [{"key": str(kv["key"]), "value": str(kv["value"])} for kv in obj]
    if not isinstance(obj, dict):
        raise ConvertError("%s: headers are not an object" % what)
    return [{"key": k, "value": v if isinstance(v, str) else json.dumps(v)} for k, v in obj.items()]


def _depth(v):
    """Nesting depth of a coordinates array: 1 for a position, 2 for a list of positions, ..."""
    d = 0
    while isinstance(v, list) and v:
        d += 1
        v = v[0]
    return d


def _geo_q(expr, what):
    geometry = expr.get("geometry") or ""
    if not geometry:
        return None
    geometry = {"point": "Point", "polygon": "Polygon", "line": "LineString"}.get(geometry, geometry)
    coords = expr.get("coords", expr.get("coordinates"))
    if isinstance(coords, str):
        text = coords.strip()
        if not text.startswith("[") and ";" in text:
            # NGSIv2's stored form: positions "lat,lon" separated by ';'
            text = "[" + ",".join("[" + p + "]" for p in text.split(";")) + "]"
        elif not text.startswith("["):
            text = "[" + text + "]"
        try:
            coords = json.loads(text)
        except ValueError:
            raise ConvertError("%s: geoQ coordinates %r cannot be converted" % (what, expr.get("coords")))
    if geometry == "Polygon" and _depth(coords) == 2:
        # a polygon stored as its one ring of positions: GeoJSON's Polygon is an array of rings
        coords = [coords]
    georel = expr.get("georel") or ""
    if "Distance:" in georel:   # stored "near;maxDistance:1000", API "near;maxDistance==1000"
        georel = georel.replace("Distance:", "Distance==")
    geo = {"geometry": geometry, "coordinates": plain(coords, what + " geoQ"), "georel": georel}
    if expr.get("geoproperty"):
        geo["geoproperty"] = db_name_to_iri(expr["geoproperty"])
    return geo


# Past the year 9999 no ISO 8601 timestamp can say it: Orion-LD's "never" (LLONG_MAX) and its kin.
_LAST_EXPIRY = 253402300799


def _expiration(value, what):
    """A stored expiration as expiresAt, or None for no expiry: absent, 0, negative (Orion-LD's -1) or beyond the
    year 9999 (LLONG_MAX)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and (value <= 0 or value > _LAST_EXPIRY):
        return None
    return timestamp(value, what + " expiration")


def convert_subscription(doc):
    sid = doc.get("_id")
    if not isinstance(sid, str):
        raise NotExported("NGSIv2 subscription %s in csubs" % (sid,))
    what = "subscription %s" % sid
    out = {"id": sid, "type": "Subscription"}
    if "name" in doc:
        out["subscriptionName"] = doc["name"]
    if "description" in doc:
        out["description"] = doc["description"]
    entities = _selectors(doc.get("entities"), what)
    if entities:
        out["entities"] = entities
    watched = _names(doc.get("conditions"), what, "watchedAttributes")
    if watched:
        out["watchedAttributes"] = watched
    if "timeInterval" in doc:
        out["timeInterval"] = doc["timeInterval"]
    expr = doc.get("expression") or {}
    if not isinstance(expr, dict):
        raise ConvertError("%s: expression is not an object" % what)
    q = _subscription_q(doc, expr, what)
    if q:
        out["q"] = q
    geo = _geo_q(expr, what)
    if geo:
        out["geoQ"] = geo
    if doc.get("status") in ("paused", "inactive"):
        out["isActive"] = False
    elif "isActive" in doc and doc["isActive"] is False:
        out["isActive"] = False
    else:
        out["isActive"] = True
    expires = _expiration(doc.get("expiration"), what)
    if expires is not None:
        out["expiresAt"] = expires
    if isinstance(doc.get("throttling"), (int, float)) and doc["throttling"] > 0:
        out["throttling"] = doc["throttling"]
    if doc.get("lang"):
        out["lang"] = doc["lang"]
    if doc.get("ldContext"):
        out["jsonldContext"] = doc["ldContext"]
    if "createdAt" not in doc or "modifiedAt" not in doc:
        raise ConvertError("%s: no createdAt/modifiedAt" % what)
    out["createdAt"] = timestamp(doc["createdAt"], what + " createdAt")
    out["modifiedAt"] = timestamp(doc["modifiedAt"], what + " modifiedAt")

    if not doc.get("reference"):
        raise ConvertError("%s: no reference (endpoint uri)" % what)
    endpoint = {"uri": doc["reference"]}
    if doc.get("mimeType"):
        endpoint["accept"] = doc["mimeType"]
    if doc.get("headers"):
        endpoint["receiverInfo"] = _key_values(doc["headers"], what)
    if doc.get("notifierInfo"):
        endpoint["notifierInfo"] = _key_values(doc["notifierInfo"], what)
    notification = {}
    attributes = _names(doc.get("attrs"), what, "notification.attributes")
    if attributes:
        notification["attributes"] = attributes
    if doc.get("format"):
        notification["format"] = doc["format"]
    notification["endpoint"] = endpoint
    for flag in ("showChanges", "sysAttrs"):
        if doc.get(flag) is True:
            notification[flag] = True
    count = doc.get("count", 0)
    failed = doc.get("timesFailed", 0)
    for label, n in (("count", count), ("timesFailed", failed)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ConvertError("%s: %s %r is not a count" % (what, label, n))
    notification["timesSent"] = int(count)
    notification["timesFailed"] = int(failed)
    for member in ("lastNotification", "lastSuccess", "lastFailure"):
        if doc.get(member) not in (None, 0):
            notification[member] = timestamp(doc[member], "%s %s" % (what, member))
    out["notification"] = notification
    return out


# ---------------------------------------------------------------- registrations

REG_SKIP = frozenset(["_id", "contextRegistration", "createdAt", "modifiedAt", "expiration", "name",
                      "servicePath", "format", "status", "properties", "timesSent", "timesFailed",
                      "lastSuccess", "lastFailure", "lastNotification", "mode", "operations", "description"])


def convert_registration(doc):
    rid = doc.get("_id")
    if not isinstance(rid, str):
        raise NotExported("NGSIv2 registration %s in registrations" % (rid,))
    what = "registration %s" % rid
    out = {"id": rid, "type": "ContextSourceRegistration"}
    if "name" in doc:
        out["registrationName"] = doc["name"]
    if "description" in doc:
        out["description"] = doc["description"]
    information = []
    endpoint = None
    for cr in doc.get("contextRegistration") or []:
        if not isinstance(cr, dict):
            raise ConvertError("%s: contextRegistration item is not an object" % what)
        info = {}
        entities = _selectors(cr.get("entities"), what)
        if entities:
            info["entities"] = entities
        props, rels = [], []
        for a in cr.get("attrs") or []:
            name = a.get("name") if isinstance(a, dict) else None
            if not is_expanded(name):
                raise ConvertError("%s: attribute name %s is not expanded" % (what, json.dumps(name)))
            (rels if a.get("type") == "Relationship" else props).append(name)
        if props:
            info["propertyNames"] = props
        if rels:
            info["relationshipNames"] = rels
        information.append(info)
        if endpoint is None and cr.get("providingApplication"):
            endpoint = cr["providingApplication"]
    if not information:
        raise ConvertError("%s: no contextRegistration" % what)
    if endpoint is None:
        raise ConvertError("%s: no providingApplication (endpoint)" % what)
    out["information"] = information
    out["endpoint"] = endpoint
    if doc.get("mode"):
        out["mode"] = doc["mode"]
    if doc.get("operations"):
        out["operations"] = plain(doc["operations"], what + " operations")
    for key in ("observationInterval", "managementInterval"):
        if isinstance(doc.get(key), dict):
            out[key] = {k: timestamp(v, "%s %s.%s" % (what, key, k)) for k, v in doc[key].items()}
    for key, val in doc.items():
        if key in REG_SKIP or key in out:
            continue
        out[key] = plain(val, "%s %s" % (what, key))
    for key, val in (doc.get("properties") or {}).items():
        name = db_name_to_iri(key)
        if not is_expanded(name):
            raise ConvertError("%s: property name %s is not expanded" % (what, json.dumps(name)))
        out[name] = plain(val, "%s property %s" % (what, name))
    expires = _expiration(doc.get("expiration"), what)
    if expires is not None:
        out["expiresAt"] = expires
    if "createdAt" not in doc or "modifiedAt" not in doc:
        raise ConvertError("%s: no createdAt/modifiedAt" % what)
    out["createdAt"] = timestamp(doc["createdAt"], what + " createdAt")
    out["modifiedAt"] = timestamp(doc["modifiedAt"], what + " modifiedAt")
    return out
