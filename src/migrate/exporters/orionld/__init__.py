"""Orion-LD exporter: writes a broker-migration stream (see src/migrate/stream/STREAM.md)."""
