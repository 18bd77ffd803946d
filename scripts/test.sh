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
# the Spark tests one Spark session), and beside them the browser layer in its own process, one
# test at a time (its tests share one dashboard server). The browser layer waits on what the
# page announces, so it passes on a machine this busy (it passes beside two busy loops too); it
# runs at the same time because much of its time is the dashboard's and the browser's waiting.
# Its output is printed after the other layers' (its failures also leave artifacts/). The
# script fails if either layer failed.
status=0
browser_log="$(mktemp)"
trap 'rm -f "$browser_log"' EXIT
echo "== browser tests: started in the background (their output follows the other layers')"
.venv/bin/python -m pytest -q tests/e2e "$@" >"$browser_log" 2>&1 &
browser_pid=$!
echo "== unit and AppTest tests (${DEID_TEST_WORKERS:-2} processes)"
.venv/bin/python -m pytest -q -n "${DEID_TEST_WORKERS:-2}" --dist loadfile \
  tests/unit tests/app "$@" || status=$?
browser_status=0
wait "$browser_pid" || browser_status=$?
echo "== browser tests"
cat "$browser_log"
[ "$browser_status" -eq 0 ] || status=$browser_status
exit "$status"
