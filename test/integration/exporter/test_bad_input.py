"""Bad input: unreachable servers, unknown tenants, bad options."""
import socket

import pytest

from conftest import PREFIX


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_mongodb_exit_2_with_a_clear_message(export):
    port = free_port()
    run = export("--mongo", "mongodb://127.0.0.1:%d/" % port, "--timeout", "1")
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.errlines[-1].startswith("error: cannot reach MongoDB at mongodb://127.0.0.1:%d/" % port)


def test_malformed_mongodb_uri_exit_2(export):
    run = export("--mongo", "notmongo://x")
    assert run.returncode == 2
    assert run.errlines[-1].startswith("error: cannot reach MongoDB at notmongo://x")


def test_unreachable_postgresql_exit_2_with_a_clear_message(loaded, export):
    port = free_port()
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX,
                 "--troe", "postgresql://postgres@127.0.0.1:%d" % port, "--timeout", "1")
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.errlines[-1].startswith("error: cannot reach PostgreSQL at postgresql://postgres@127.0.0.1:%d" % port)


def test_malformed_troe_connection_string_exit_2(loaded, export):
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", "host=127.0.0.1 nonsense")
    assert run.returncode == 2
    assert run.errlines[-1].startswith("error: ")


def test_unknown_tenant_exit_2_nothing_written(loaded, export):
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--troe", loaded["TROE_URL"],
                 "--tenants", "t1,nosuch")
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.errlines == ['error: tenant "nosuch" does not exist (no MongoDB database ldbexp-nosuch '
                            'nor PostgreSQL database ldbexp_nosuch)']


def test_unknown_prefix_means_no_tenant(loaded, export):
    run = export("--mongo", loaded["MONGO_URL"], "--db", "ldbexp_none", "--tenants", "default")
    assert run.returncode == 2
    assert "does not exist" in run.errlines[-1]


def test_unknown_prefix_without_tenants_exit_2_naming_it(loaded, export):
    # issue 21: it exported nothing with exit 0 and no word
    run = export("--mongo", loaded["MONGO_URL"], "--db", "ldbexp_none")
    assert run.returncode == 2
    assert "--db ldbexp_none names no database on the MongoDB server" in run.stderr
    assert run.records == []


def test_no_current_without_troe_is_a_usage_error(export):
    run = export("--noCurrent")
    assert run.returncode == 2
    assert "--noCurrent leaves nothing to export without --troe" in run.stderr


def test_unknown_option_is_a_usage_error(export):
    run = export("--frobnicate")
    assert run.returncode == 2
    assert "unrecognized arguments: --frobnicate" in run.stderr


def test_unwritable_out_exit_2(loaded, export, tmp_path):
    run = export("--mongo", loaded["MONGO_URL"], "--db", PREFIX, "--out", str(tmp_path / "no" / "such" / "dir"))
    assert run.returncode == 2
    assert run.errlines[-1].startswith("error: cannot write")
