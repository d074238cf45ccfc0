#!/usr/bin/env python3
"""Builds broker-migration-v1.schema.json (JSON Schema draft 2020-12) for the
broker-migration stream, version 1.  See STREAM.md beside this file.

The name rule needs the list of NGSI-LD core terms; it is taken from the
NGSI-LD v1.8 core context and written into the schema as regular expressions,
so the schema alone (with ajv or any draft 2020-12 validator) applies the rule.

    python3 build_schema.py [path/to/ngsi-ld-core-context-v1.8.jsonld]

writes the schema next to this file.  A unit test checks the committed schema
equals what this script builds.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_FILE = os.path.join(HERE, "broker-migration-v1.schema.json")
TERMS_FILE = os.path.join(HERE, "core-terms-v1.8.json")
DEFAULT_CONTEXT = "/work/shared/contexts/ngsi-ld-core-context-v1.8.jsonld"

# An absolute IRI as the name rule means it: http://, https:// or urn: then at
# least one character, no white space.
IRI_PATTERN = r"(?:https?://|urn:)[^\s]+"
DATE_TIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$"

# Members of an entity that are not attributes.
ENTITY_MEMBERS = ["id", "type", "scope", "createdAt", "modifiedAt", "deletedAt", "expiresAt"]
# Members of an attribute instance that are not Sub-Attributes.
INSTANCE_MEMBERS = ["type", "value", "object", "languageMap", "vocab", "json", "valueList",
                    "objectList", "objectType", "createdAt", "modifiedAt", "deletedAt",
                    "observedAt", "unitCode", "datasetId", "instanceId", "lang"]
VALUE_MEMBER = {
    "Property": "value",
    "GeoProperty": "value",
    "Relationship": "object",
    "LanguageProperty": "languageMap",
    "VocabProperty": "vocab",
    "JsonProperty": "json",
    "ListProperty": "valueList",
    "ListRelationship": "objectList",
}


def core_terms(context_path):
    with open(context_path, encoding="utf-8") as f:
        ctx = json.load(f)["@context"]
    # "ngsi-ld" is the prefix of the core vocabulary, not a term.
    return sorted(k for k in ctx if not k.startswith("@") and k != "ngsi-ld")


def alternation(words):
    return "|".join(re.escape(w) for w in sorted(words))


def name_pattern(terms, exclude=()):
    """Anchored regex: an absolute IRI or a core term not in exclude."""
    allowed = [t for t in terms if t not in set(exclude)]
    return "^(?:" + IRI_PATTERN + "|(?:" + alternation(allowed) + "))$"


def build(terms):
    name = name_pattern(terms)
    attr_name = name_pattern(terms, ENTITY_MEMBERS)
    sub_attr_name = name_pattern(terms, INSTANCE_MEMBERS)
    date_time = {"type": "string", "pattern": DATE_TIME}

    def value_rules():
        rules = []
        for typ, member in VALUE_MEMBER.items():
            rules.append({"if": {"properties": {"type": {"const": typ}}, "required": ["type"]},
                          "then": {"required": [member]}})
        return rules

    instance_common = {
        "type": {"enum": list(VALUE_MEMBER)},
        "value": {},
        # a Relationship's object: one id, or several (a multi-object Relationship, CIM 009 v1.8 §4.5.3)
        "object": {"oneOf": [{"type": "string", "minLength": 1},
                             {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}]},
        "objectList": {"type": "array"},
        "valueList": {"type": "array"},
        "languageMap": {"type": "object"},
        "vocab": {"oneOf": [{"$ref": "#/$defs/name"},
                            {"type": "array", "items": {"$ref": "#/$defs/name"}, "minItems": 1}]},
        "json": {},
        "objectType": {},
        "createdAt": {"$ref": "#/$defs/dateTime"},
        "modifiedAt": {"$ref": "#/$defs/dateTime"},
        "observedAt": {"$ref": "#/$defs/dateTime"},
        "unitCode": {"type": "string", "minLength": 1},
        "datasetId": {"type": "string", "minLength": 1},
        "lang": {"type": "string"},
    }

    attribute_instance = {
        "type": "object",
        "required": ["type", "createdAt", "modifiedAt"],
        "properties": instance_common,
        "patternProperties": {sub_attr_name: {"$ref": "#/$defs/attributeInstance"}},
        "additionalProperties": False,
        "allOf": value_rules(),
    }
    history_instance = {
        "type": "object",
        "required": ["instanceId", "createdAt", "modifiedAt"],
        "properties": dict(instance_common, instanceId={"type": "string", "minLength": 1},
                           deletedAt={"$ref": "#/$defs/dateTime"}),
        "patternProperties": {sub_attr_name: {"$ref": "#/$defs/attributeInstance"}},
        "additionalProperties": False,
        "allOf": value_rules(),
    }
    attribute = {
        "oneOf": [
            {"$ref": "#/$defs/attributeInstance"},
            {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/attributeInstance"},
             # at most one default instance (one without datasetId)
             "contains": {"not": {"required": ["datasetId"]}}, "minContains": 0, "maxContains": 1},
        ]
    }
    names = {"type": "array", "items": {"$ref": "#/$defs/name"}}
    entity_selector = {
        "type": "object",
        "required": ["type"],
        "properties": {"id": {"type": "string", "minLength": 1},
                       "idPattern": {"type": "string", "minLength": 1},
                       "type": {"$ref": "#/$defs/name"}},
        "additionalProperties": False,
    }
    entity = {
        "type": "object",
        "required": ["id", "type", "createdAt", "modifiedAt"],
        "properties": {
            "id": {"type": "string", "minLength": 1},
            "type": {"oneOf": [{"$ref": "#/$defs/name"},
                               {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/name"}}]},
            "scope": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
            "createdAt": {"$ref": "#/$defs/dateTime"},
            "modifiedAt": {"$ref": "#/$defs/dateTime"},
            "expiresAt": {"$ref": "#/$defs/dateTime"},
        },
        "patternProperties": {attr_name: {"$ref": "#/$defs/attribute"}},
        "additionalProperties": False,
    }
    key_values = {"type": "array", "items": {
        "type": "object", "required": ["key", "value"],
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
        "additionalProperties": False}}
    subscription = {
        "type": "object",
        "required": ["id", "type", "createdAt", "modifiedAt", "notification"],
        "properties": {
            "id": {"type": "string", "minLength": 1},
            "type": {"const": "Subscription"},
            "subscriptionName": {"type": "string"},
            "description": {"type": "string"},
            "entities": {"type": "array", "items": entity_selector},
            "watchedAttributes": names,
            "timeInterval": {"type": "number"},
            "q": {"type": "string", "minLength": 1},
            "geoQ": {"type": "object", "required": ["geometry", "coordinates", "georel"]},
            "scopeQ": {"type": "string"},
            "csf": {"type": "string"},
            "isActive": {"type": "boolean"},
            "expiresAt": {"$ref": "#/$defs/dateTime"},
            "throttling": {"type": "number", "exclusiveMinimum": 0},
            "lang": {"type": "string"},
            "jsonldContext": {"type": "string"},
            "createdAt": {"$ref": "#/$defs/dateTime"},
            "modifiedAt": {"$ref": "#/$defs/dateTime"},
            "notification": {
                "type": "object",
                "required": ["endpoint", "timesSent", "timesFailed"],
                "properties": {
                    "attributes": names,
                    "format": {"type": "string"},
                    "showChanges": {"type": "boolean"},
                    "sysAttrs": {"type": "boolean"},
                    "endpoint": {
                        "type": "object", "required": ["uri"],
                        "properties": {"uri": {"type": "string", "minLength": 1},
                                       "accept": {"type": "string"},
                                       "receiverInfo": key_values,
                                       "notifierInfo": key_values},
                        "additionalProperties": False},
                    "timesSent": {"type": "integer", "minimum": 0},
                    "timesFailed": {"type": "integer", "minimum": 0},
                    "lastNotification": {"$ref": "#/$defs/dateTime"},
                    "lastSuccess": {"$ref": "#/$defs/dateTime"},
                    "lastFailure": {"$ref": "#/$defs/dateTime"},
                },
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }
    registration = {
        "type": "object",
        "required": ["id", "type", "information", "endpoint", "createdAt", "modifiedAt"],
        "properties": {
            "id": {"type": "string", "minLength": 1},
            "type": {"const": "ContextSourceRegistration"},
            "registrationName": {"type": "string"},
            "description": {"type": "string"},
            "information": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "properties": {"entities": {"type": "array", "items": entity_selector},
                               "propertyNames": names, "relationshipNames": names},
                "additionalProperties": False}},
            "endpoint": {"type": "string", "minLength": 1},
            "mode": {"enum": ["inclusive", "exclusive", "redirect", "auxiliary"]},
            "operations": {"type": "array", "items": {"type": "string"}},
            "createdAt": {"$ref": "#/$defs/dateTime"},
            "modifiedAt": {"$ref": "#/$defs/dateTime"},
            "expiresAt": {"$ref": "#/$defs/dateTime"},
        },
        # other members (registration properties, intervals, spaces, ...) are
        # carried as they are; their names follow the name rule
        "propertyNames": {"$ref": "#/$defs/name"},
    }
    temporal_entity = {
        "type": "object",
        "required": ["id", "type", "op", "at"],
        "properties": {"id": {"type": "string", "minLength": 1},
                       "type": {"$ref": "#/$defs/name"},
                       "op": {"enum": ["created", "replaced", "deleted"]},
                       "at": {"$ref": "#/$defs/dateTime"}},
        "additionalProperties": False,
    }
    temporal_instance = {
        "type": "object",
        "required": ["id", "type", "attr", "op", "instance"],
        "properties": {"id": {"type": "string", "minLength": 1},
                       "type": {"$ref": "#/$defs/name"},
                       "attr": {"$ref": "#/$defs/attributeName"},
                       "op": {"enum": ["created", "modified", "replaced", "deleted"]},
                       "instance": {"$ref": "#/$defs/historyInstance"}},
        "additionalProperties": False,
        "allOf": [
            {"if": {"properties": {"op": {"const": "deleted"}}, "required": ["op"]},
             "then": {"properties": {"instance": {"required": ["deletedAt"]}}},
             "else": {"properties": {"instance": {"required": ["type"]}}}},
        ],
    }

    def record(kind, data):
        return {"type": "object", "required": ["kind", "data"],
                "properties": {"kind": {"const": kind},
                               "tenant": {"type": "string"},
                               "data": {"$ref": "#/$defs/" + data}},
                "additionalProperties": False}

    header = {"type": "object", "required": ["kind", "format", "version", "source"],
              "properties": {"kind": {"const": "header"},
                             "format": {"const": "broker-migration"},
                             "version": {"const": 1},
                             "source": {"type": "string", "minLength": 1}},
              "additionalProperties": False}

    kinds = {"header": header,
             "entity": record("entity", "entity"),
             "subscription": record("subscription", "subscription"),
             "registration": record("registration", "registration"),
             "temporalEntity": record("temporalEntity", "temporalEntity"),
             "temporalInstance": record("temporalInstance", "temporalInstance")}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:ldbroker:broker-migration:v1",
        "title": "broker-migration stream, version 1: one line (record) of the NDJSON stream",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(kinds)}},
        "allOf": [{"if": {"properties": {"kind": {"const": k}}, "required": ["kind"]},
                   "then": {"$ref": "#/$defs/" + k + "Record"}} for k in kinds],
        "$defs": dict(
            {k + "Record": v for k, v in kinds.items()},
            name={"type": "string", "pattern": name},
            attributeName={"type": "string", "pattern": attr_name},
            dateTime=date_time,
            attribute=attribute,
            attributeInstance=attribute_instance,
            historyInstance=history_instance,
            entity=entity,
            subscription=subscription,
            registration=registration,
            temporalEntity=temporal_entity,
            temporalInstance=temporal_instance,
        ),
    }


def render(obj):
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def main(argv):
    ctx = argv[1] if len(argv) > 1 else DEFAULT_CONTEXT
    terms = core_terms(ctx)
    with open(TERMS_FILE, "w", encoding="utf-8") as f:
        f.write(render(terms))
    with open(SCHEMA_FILE, "w", encoding="utf-8") as f:
        f.write(render(build(terms)))
    print("wrote %s (%d core terms) and %s" % (TERMS_FILE, len(terms), SCHEMA_FILE))


if __name__ == "__main__":
    main(sys.argv)
