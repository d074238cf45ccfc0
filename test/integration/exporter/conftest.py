"""Fixtures of the exporter's integration tests: the real servers started by
test/services (FerretDB for MongoDB, PostgreSQL with PostGIS) and the Orion-LD
fixture data of test/fixtures/orionld loaded under the prefix 'ldbexp'."""
import fcntl
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
EXPORTER = os.path.join(REPO, "src", "migrate", "exporters", "orionld", "orionld-export")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "src", "migrate", "stream"))

import load_fixtures  # noqa: E402

PREFIX = "ldbexp"


def load(env):
    load_fixtures.load_mongo(env["MONGO_URL"], PREFIX)
    load_fixtures.load_troe(env["TROE_URL"], PREFIX)


@pytest.fixture(scope="session")
def services():
    env = load_fixtures.service_env()
    if not env.get("MONGO_URL") or not env.get("TROE_URL"):
        pytest.fail("the test servers are not running: run test/integration/exporter/run.sh "
                    "(or test/services/ferretdb.sh and test/services/postgres.sh)")
    return env


@pytest.fixture(scope="session")
def loaded(services, tmp_path_factory):
    # Loaded once per run: run.sh runs the tests in two processes (pytest-xdist), and a second load drops the
    # databases under the other's tests. The first process to get here loads; the others wait on the lock and find
    # the mark, in the temporary directory the processes of one run share.
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        load(services)
        return services
    shared = tmp_path_factory.getbasetemp().parent
    with open(shared / "loaded.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        mark = shared / "loaded"
        if not mark.exists():
            load(services)
            mark.touch()
    return services


class Run:
    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.lines = [l for l in proc.stdout.splitlines()]
        self.records = [json.loads(l) for l in self.lines if l.strip()]
        self.errlines = proc.stderr.splitlines()


def run_exporter(*args, timeout=120):
    proc = subprocess.run([sys.executable, EXPORTER] + list(args), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    return Run(proc)


@pytest.fixture
def export():
    return run_exporter


def expected_records():
    with open(os.path.join(REPO, "test", "fixtures", "orionld", "expected-stream.json"), encoding="utf-8") as f:
        return json.load(f)
