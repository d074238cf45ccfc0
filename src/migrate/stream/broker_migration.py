"""Validator of the broker-migration stream, version 1 (see STREAM.md).

Two layers, both documented in STREAM.md so that a TypeScript port is
mechanical:

1. broker-migration-v1.schema.json (JSON Schema draft 2020-12): the shape of
   every record kind, and the name rule expressed as regular expressions.
2. The checks a schema cannot say well, done here:
   - name_violations(): walks a record and lists every name NGSI-LD expands
     that is neither an absolute IRI nor a core term, with where it is, so a
     refusal names the term;
   - q_violations(): the attribute paths of a subscription's q;
   - check_stream(): the line order rules (header only as the first line,
     per tenant registrations before the other kinds, temporalEntity records
     of an entity before its temporalInstance records).

Usage as a program:  python3 broker_migration.py STREAM.ndjson   (or - for stdin)
exit status 0 when every line is valid, 1 otherwise; one line per problem.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_FILE = os.path.join(HERE, "broker-migration-v1.schema.json")
TERMS_FILE = os.path.join(HERE, "core-terms-v1.8.json")

with open(TERMS_FILE, encoding="utf-8") as _f:
    CORE_TERMS = frozenset(json.load(_f))

_IRI = re.compile(r"^(?:https?://|urn:)[^\s]+$")

# Non-attribute members, as in build_schema.py
ENTITY_MEMBERS = frozenset(["id", "type", "scope", "createdAt", "modifiedAt", "deletedAt", "expiresAt"])
INSTANCE_MEMBERS = frozenset(["type", "value", "object", "languageMap", "vocab", "json", "valueList",
                              "objectList", "objectType", "createdAt", "modifiedAt", "deletedAt",
                              "observedAt", "unitCode", "datasetId", "instanceId", "lang"])
KINDS = ("header", "entity", "subscription", "registration", "temporalEntity", "temporalInstance")

_validator = None


def load_schema():
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        return json.load(f)


def _schema_validator():
    global _validator
    if _validator is None:
        from jsonschema import Draft202012Validator
        _validator = Draft202012Validator(load_schema())
    return _validator


def is_expanded(name):
    """The name rule: an absolute IRI (http://, https://, urn:) or a core term."""
    return isinstance(name, str) and (bool(_IRI.match(name)) or name in CORE_TERMS)


def _check(name, where, out):
    if not is_expanded(name):
        out.append((where, name))


def _instance_names(inst, where, out):
    if not isinstance(inst, dict):
        return
    vocab = inst.get("vocab")
    if inst.get("type") == "VocabProperty" and vocab is not None:
        for v in (vocab if isinstance(vocab, list) else [vocab]):
            _check(v, where + ".vocab", out)
    for key, sub in inst.items():
        if key in INSTANCE_MEMBERS:
            continue
        _check(key, where + " sub-attribute", out)
        for s in (sub if isinstance(sub, list) else [sub]):
            _instance_names(s, where + "." + str(key), out)


def _selector_names(selectors, where, out):
    for i, sel in enumerate(selectors or []):
        if isinstance(sel, dict) and "type" in sel:
            _check(sel["type"], "%s[%d].type" % (where, i), out)


def name_violations(record):
    """[(where, name), ...] for every name of the record that is not expanded."""
    out = []
    kind = record.get("kind")
    data = record.get("data")
    if not isinstance(data, dict):
        return out
    if kind == "entity":
        types = data.get("type")
        for t in (types if isinstance(types, list) else [types]):
            _check(t, "entity type", out)
        for key, attr in data.items():
            if key in ENTITY_MEMBERS:
                continue
            _check(key, "attribute name", out)
            for inst in (attr if isinstance(attr, list) else [attr]):
                _instance_names(inst, str(key), out)
    elif kind == "subscription":
        _selector_names(data.get("entities"), "entities", out)
        for a in data.get("watchedAttributes") or []:
            _check(a, "watchedAttributes", out)
        notif = data.get("notification") if isinstance(data.get("notification"), dict) else {}
        for a in notif.get("attributes") or []:
            _check(a, "notification.attributes", out)
        if isinstance(data.get("q"), str):
            for name in q_attribute_names(data["q"]):
                _check(name, "q", out)
    elif kind == "registration":
        for i, info in enumerate(data.get("information") or []):
            if not isinstance(info, dict):
                continue
            _selector_names(info.get("entities"), "information[%d].entities" % i, out)
            for member in ("propertyNames", "relationshipNames"):
                for a in info.get(member) or []:
                    _check(a, "information[%d].%s" % (i, member), out)
    elif kind == "temporalEntity":
        _check(data.get("type"), "type", out)
    elif kind == "temporalInstance":
        _check(data.get("type"), "type", out)
        _check(data.get("attr"), "attr", out)
        _instance_names(data.get("instance"), "instance", out)
    return out


# q: Attribute paths are what stands before an operator, or alone in a term.
# In the stream, the dots of an IRI are written %2E, so a '.' separates an
# attribute from a Sub-Attribute, and '[' starts a path into a compound value.
_Q_OPERATORS = re.compile(r"==|!=|>=|<=|~=|!~=|>|<")


def q_attribute_names(q):
    """The attribute and Sub-Attribute names (with %2E decoded to '.') a q uses."""
    names = []
    i, n = 0, len(q)
    while i < n:
        c = q[i]
        if c in "()!;|":
            i += 1
            continue
        # an attribute path runs to an operator, a term end or the end
        j = i
        while j < n and q[j] not in ";|()" and not _Q_OPERATORS.match(q, j):
            j += 1
        path = q[i:j]
        if "[" in path:
            path = path[:path.index("[")]
        for part in path.split("."):
            if part:
                names.append(part.replace("%2E", ".").replace("%2e", "."))
        # skip the operator and the value, up to the end of the term
        if j < n and _Q_OPERATORS.match(q, j):
            j += len(_Q_OPERATORS.match(q, j).group(0))
            in_string = False
            while j < n:
                if q[j] == '"':
                    in_string = not in_string
                elif not in_string and q[j] in ";|)":
                    break
                j += 1
        i = j
    return names


def validate_record(record):
    """Error messages for one record (empty: valid)."""
    if not isinstance(record, dict):
        return ["a record must be a JSON object"]
    errors = []
    def best_match(context):
        # the branch that fits the instance's JSON type, then the deepest problem
        return max(context, key=lambda e: (not (e.validator == "type" and not e.relative_path),
                                           len(e.absolute_path), e.validator != "oneOf"))
    for err in sorted(_schema_validator().iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path]):
        # oneOf / if-then: name the branch's own problem rather than "not valid under any"
        while err.context:
            err = best_match(err.context)
        where = "/".join(str(p) for p in err.absolute_path) or "(record)"
        errors.append("%s: %s" % (where, err.message))
    for where, name in name_violations(record):
        errors.append("%s: name %s is not expanded (not an absolute IRI nor an NGSI-LD core term)"
                      % (where, json.dumps(name)))
    return errors


def check_stream(lines):
    """[(line number, message), ...] for a stream given as an iterable of lines."""
    problems = []
    seen_other = set()        # tenants that already had a non-registration record
    instances_seen = set()    # (tenant, entity id) with a temporalInstance already
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            problems.append((lineno, "empty line"))
            continue
        try:
            record = json.loads(line)
        except ValueError as e:
            problems.append((lineno, "not JSON: %s" % e))
            continue
        for msg in validate_record(record):
            problems.append((lineno, msg))
        if not isinstance(record, dict):
            continue
        kind = record.get("kind")
        tenant = record.get("tenant") or ""
        data = record.get("data") if isinstance(record.get("data"), dict) else {}
        if kind == "header" and lineno != 1:
            problems.append((lineno, "a header may only be the first line"))
        elif kind == "registration" and tenant in seen_other:
            problems.append((lineno, "registration after other records of tenant %s" % json.dumps(tenant)))
        elif kind in ("entity", "subscription", "temporalEntity", "temporalInstance"):
            seen_other.add(tenant)
        if kind == "temporalInstance":
            instances_seen.add((tenant, data.get("id")))
        elif kind == "temporalEntity" and (tenant, data.get("id")) in instances_seen:
            problems.append((lineno, "temporalEntity of %s after its temporalInstance records" % data.get("id")))
    return problems


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: broker_migration.py STREAM.ndjson|-\n")
        return 2
    f = sys.stdin if argv[1] == "-" else open(argv[1], encoding="utf-8")
    problems = check_stream(f)
    for lineno, msg in problems:
        print("line %d: %s" % (lineno, msg))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
