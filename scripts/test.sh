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

echo "== tests"
.venv/bin/python -m pytest -q "$@"
