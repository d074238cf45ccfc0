"""Shared pieces of the Orion-LD exporter: errors, timestamps, names, JSON values."""
import datetime
import json
import math
import os
import re

# The stream contract (src/migrate/stream) holds the core term list of the name rule.
_TERMS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "stream",
                           "core-terms-v1.8.json")
with open(_TERMS_FILE, encoding="utf-8") as _f:
    CORE_TERMS = frozenset(json.load(_f))
_IRI = re.compile(r"^(?:https?://|urn:)[^\s]+$")

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class ConvertError(Exception):
    """A document or row that cannot be converted: reported, skipped, exit status 1."""


class NotExported(Exception):
    """Something §2.6 says is not exported: reported, skipped."""


def is_expanded(name):
    return isinstance(name, str) and (bool(_IRI.match(name)) or name in CORE_TERMS)


def db_name_to_iri(key):
    """Orion-LD stores the dots of names as '=' in keys."""
    return key.replace("=", ".")


def iso(dt):
    """A datetime as ISO 8601 UTC, milliseconds (microseconds when it has them)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    dt = dt.astimezone(datetime.timezone.utc)
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond % 1000 == 0:
        return "%s.%03dZ" % (base, dt.microsecond // 1000)
    return "%s.%06dZ" % (base, dt.microsecond)


_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$")


def timestamp(value, what):
    """Orion-LD's stored timestamp (epoch seconds, float or int) as ISO 8601.
    Also takes a BSON date or an ISO 8601 string (some paths store those)."""
    if isinstance(value, bool):
        raise ConvertError("%s: %r is not a timestamp" % (what, value))
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ConvertError("%s: %r is not a timestamp" % (what, value))
        ms = int(round(value * 1000))
        try:
            return iso(EPOCH + datetime.timedelta(milliseconds=ms))
        except OverflowError:
            raise ConvertError("%s: %r is out of range for a timestamp" % (what, value))
    if isinstance(value, datetime.datetime):
        return iso(value)
    if isinstance(value, str) and _ISO_RE.match(value):
        return value
    raise ConvertError("%s: %r is not a timestamp" % (what, value))


def plain(value, what):
    """A stored value as plain JSON; anything JSON cannot hold is a ConvertError."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConvertError("%s: the number %r cannot be converted to JSON" % (what, value))
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConvertError("%s: member name %r is not a string" % (what, k))
            out[k] = plain(v, what)
        return out
    if isinstance(value, (list, tuple)):
        return [plain(v, what) for v in value]
    raise ConvertError("%s: a value of type %s cannot be converted to JSON"
                       % (what, type(value).__name__))


# Orion-LD refuses the characters <>"'=;() in stored strings: clients send them percent-encoded (%27 for ') and
# Orion-LD keeps them so. NGSI-LD has no such rule, so the stream holds the characters themselves.
_FORBIDDEN = re.compile(r"%(3C|3E|22|27|3D|3B|28|29)", re.IGNORECASE)


def decode_forbidden(value):
    """A value with the percent-encoded forbidden characters of its strings decoded, at any depth (member names
    of a compound value are left as they are)."""
    if isinstance(value, str):
        return _FORBIDDEN.sub(lambda m: chr(int(m.group(1), 16)), value) if "%" in value else value
    if isinstance(value, list):
        return [decode_forbidden(v) for v in value]
    if isinstance(value, dict):
        return {k: decode_forbidden(v) for k, v in value.items()}
    return value
