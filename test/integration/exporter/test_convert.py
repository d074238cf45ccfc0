"""The exporter's conversion rules on single documents (no server needed)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "src", "migrate", "exporters"))

from orionld.common import ConvertError, NotExported, timestamp  # noqa: E402
from orionld.current import convert_entity, convert_instance, convert_q, convert_subscription  # noqa: E402

TIMES = ("2024-01-01T00:00:00.000Z", "2024-01-01T00:00:01.000Z")


@pytest.mark.parametrize("stored,stream", [
    ("https://a=b/p.value>1", "https://a%2Eb/p>1"),
    ("https://a=b/p.value==1..5", "https://a%2Eb/p==1..5"),
    ("https://a=b/p.value!=%22x%22", 'https://a%2Eb/p!="x"'),
    ("https://a=b/p.value~=abc.*", "https://a%2Eb/p~=abc.*"),
    ("https://a=b/p.md.https://a=b/s.value<=3", "https://a%2Eb/p.https://a%2Eb/s<=3"),
    ("attrs.https://a=b/p.value>=2", "https://a%2Eb/p>=2"),
    ("https://a=b/p.value.x.y==%22a;b%22", 'https://a%2Eb/p[x.y]=="a;b"'),
    ("!https://a=b/p", "!https://a%2Eb/p"),
    ("(p==1|q==2);r", "(p==1|q==2);r"),
    ("https://a=b/p==2023-01-01T00:00:00Z", "https://a%2Eb/p==2023-01-01T00:00:00Z"),
])
def test_q(stored, stream):
    assert convert_q(stored) == stream


@pytest.mark.parametrize("value,iso", [
    (0, "1970-01-01T00:00:00.000Z"),
    (1700000000.123, "2023-11-14T22:13:20.123Z"),
    (1617617460.999, "2021-04-05T10:11:00.999Z"),
    ("2023-01-01T00:00:00Z", "2023-01-01T00:00:00Z"),
])
def test_timestamps(value, iso):
    assert timestamp(value, "t") == iso


@pytest.mark.parametrize("value", [True, "yesterday", None, float("nan"), float("inf"), 1e20, [1], {"$date": 1}])
def test_bad_timestamps(value):
    with pytest.raises(ConvertError):
        timestamp(value, "t")


@pytest.mark.parametrize("stored,message", [
    ({"type": "Number", "value": 1}, 'unknown attribute type "Number"'),
    ({"value": 1}, "unknown attribute type null"),
    ({"type": "Property"}, "has no value"),
    ({"type": "Property", "value": None}, "null value"),
    ({"type": "Relationship", "value": 5}, "is not a URI"),
    ({"type": "GeoProperty", "value": "not geojson"}, "not GeoJSON"),
    ({"type": "GeoProperty", "value": [1, 2]}, "not GeoJSON"),
    ({"type": "LanguageProperty", "value": "en"}, "not a language map"),
    ({"type": "VocabularyProperty", "value": "Office"}, "vocab 'Office' is not an expanded name"),
    ({"type": "Property", "value": 1, "md": {"observedAt": {"type": "DateTime"}}}, "observedAt: no value"),
    ({"type": "Property", "value": 1, "md": {"short": {"type": "Property", "value": 1}}}, 'Sub-Attribute name "short"'),
    ({"type": "Property", "value": 1, "md": {"https://a=b/s": {"type": "Foo", "value": 1}}}, 'unknown attribute type "Foo"'),
    ({"type": "Property", "value": 1, "md": []}, "md is not an object"),
    ({"type": "Property", "value": {1: 2}}, "member name 1 is not a string"),
    ("text", "is not an object"),
])
def test_bad_instances(stored, message):
    with pytest.raises(ConvertError) as e:
        convert_instance("https://a.b/p", stored, TIMES, "entity urn:x")
    assert message in str(e.value)


def test_geojson_kept_as_a_string_is_parsed():
    inst = convert_instance("https://a.b/p", {"type": "GeoProperty", "value": '{"type":"Point","coordinates":[1,2]}'},
                            TIMES, "e")
    assert inst == {"type": "GeoProperty", "value": {"type": "Point", "coordinates": [1, 2]},
                    "createdAt": TIMES[0], "modifiedAt": TIMES[1]}


def test_entity_attribute_name_not_expanded():
    doc = {"_id": {"id": "urn:x", "type": "https://a.b/T"}, "creDate": 1, "modDate": 2,
           "attrs": {"temp": {"type": "Property", "value": 1}}}
    with pytest.raises(ConvertError, match='attribute name "temp" is not expanded'):
        convert_entity(doc)


def test_entity_without_id():
    with pytest.raises(ConvertError, match="no _id.id"):
        convert_entity({"_id": "x"})


def test_dataset_instance_without_dataset_id():
    doc = {"_id": {"id": "urn:x", "type": "https://a.b/T"}, "creDate": 1, "modDate": 2,
           "@datasets": {"https://a=b/p": [{"type": "Property", "value": 1}]}}
    with pytest.raises(ConvertError, match="without datasetId"):
        convert_entity(doc)


def test_ngsiv2_subscription_is_not_exported():
    from bson import ObjectId
    with pytest.raises(NotExported):
        convert_subscription({"_id": ObjectId()})


@pytest.mark.parametrize("member,value,message", [
    ("count", -1, "count -1 is not a count"),
    ("count", "many", "count 'many' is not a count"),
    ("reference", None, "no reference"),
    ("createdAt", None, "no createdAt"),
    ("conditions", ["short"], 'watchedAttributes name "short"'),
])
def test_bad_subscriptions(member, value, message):
    doc = {"_id": "urn:s", "entities": [], "reference": "http://x", "createdAt": 1, "modifiedAt": 1}
    if value is None:
        doc.pop(member, None)
    else:
        doc[member] = value
    with pytest.raises(ConvertError) as e:
        convert_subscription(doc)
    assert message in str(e.value)
