#!/usr/bin/env bash
# Install what the tests need and run them all: unit, AppTest, Spark engine and browser
# (Playwright driving Debian's chromium). Usage: bash scripts/test.sh [extra pytest arguments]
# (e.g. -m "not spark" to leave the Spark tests out).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ]; then
  echo "== installing Debian's chromium for the browser tests"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

if ! command -v java >/dev/null 2>&1; then
  echo "== installing Debian's Java runtime for the Spark tests"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq default-jre-headless >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  python3 -m venv .venv
fi
echo "== installing requirements-dev.txt and requirements-spark.txt"
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt \
  -r requirements-spark.txt

echo "== lint"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

# The unit and AppTest layers in parallel processes (pytest-xdist; DEID_TEST_WORKERS, default 2),
# each test file whole in one process (--dist loadfile: a file's tests share its fixtures, and
# the Spark tests one Spark session); then the browser layer alone, one test at a time (its
# tests share one dashboard server, and a browser needs the cores the server computes on).
# The browser layer runs even when the first failed; the script fails if either did.
status=0
echo "== unit and AppTest tests (${DEID_TEST_WORKERS:-2} processes)"
.venv/bin/python -m pytest -q -n "${DEID_TEST_WORKERS:-2}" --dist loadfile \
  tests/unit tests/app "$@" || status=$?
echo "== browser tests"
.venv/bin/python -m pytest -q tests/e2e "$@" || status=$?
exit "$status"
