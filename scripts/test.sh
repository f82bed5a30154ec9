#!/usr/bin/env bash
# The whole test suite, runnable on a fresh machine: it installs what it needs.
#   1. Rust unit and integration tests (the integration tests start real servers).
#   2. End-to-end tests driven by third-party OpenID Connect clients (Python Authlib,
#      panva's openid-client on Node.js 20+, Go's go-oidc) against the built `authrim` binary,
#      and the login, consent and logout pages in headless Chromium (Debian's package,
#      installed if missing) driven by Playwright.
#   xmlsec1, libxml2, OpenSSL and libclang (Debian's -dev packages, installed if missing) to
#   build the SAML module, and the xmlsec1 command the SAML tests check signatures with.
#   OpenLDAP (Debian's slapd and ldap-utils, installed if missing): each LDAP test starts
#   its own slapd on a free loopback port (scripts/slapd.sh).
#   PostgreSQL: a throwaway cluster on a free loopback port (installed from Debian's packages
#   if missing; scripts/pg.sh), for the store contract and multi-node tests; removed at exit.
#   3. The load-testing pipeline at smoke rates: k6 (built with `go install`), the seeder,
#      every scenario, /metrics snapshots and the reports.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
  if need apt-get; then
    echo "==> installing Debian packages: $*"
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$@"
    else sudo apt-get update -qq && sudo apt-get install -y -qq "$@"; fi
  else
    echo "missing: $* (install them with your package manager)" >&2; exit 1
  fi
}

if ! need cargo; then
  echo "cargo not found: install Rust from https://rustup.rs (1.85 or newer)" >&2; exit 1
fi
if ! need go; then
  echo "go not found: install Go from https://go.dev/dl (k6 and the go-oidc tests are built with it)" >&2; exit 1
fi
need cc || apt_install build-essential
need python3 || apt_install python3
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
need curl || apt_install curl

echo "==> PostgreSQL for the tests (throwaway cluster)"
PG_DIR=$(mktemp -d)
PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
trap 'scripts/pg.sh stop "$PG_DIR" >/dev/null 2>&1 || true; rm -rf "$PG_DIR"' EXIT
AUTHRIM_TEST_POSTGRES_URL=$(scripts/pg.sh start "$PG_DIR" "$PG_PORT")
export AUTHRIM_TEST_POSTGRES_URL
echo "    $AUTHRIM_TEST_POSTGRES_URL"

# OpenLDAP for the LDAP tests (tests/integration/ldap.rs start their own slapd with
# scripts/slapd.sh, which also installs it when missing; installed here once, up front).
{ [ -x /usr/sbin/slapd ] && need ldapadd; } || (export DEBIAN_FRONTEND=noninteractive; apt_install slapd ldap-utils)

# SAML (src/saml): samael builds against xmlsec1, libxml2 and OpenSSL, with bindgen (libclang);
# the tests check our signatures with the xmlsec1 command too.
libclang_present() { compgen -G '/usr/lib/llvm-*/lib/libclang*.so*' >/dev/null || compgen -G '/usr/lib/*/libclang*.so*' >/dev/null; }
{ need pkg-config && pkg-config --exists xmlsec1-openssl libxml-2.0 openssl && need xmlsec1 && libclang_present; } ||
  (export DEBIAN_FRONTEND=noninteractive; apt_install pkg-config libxmlsec1-dev libxml2-dev libssl-dev libclang-dev xmlsec1)

echo "==> cargo test"
# `cargo test` also builds target/debug/authrim, the binary the end-to-end tests run (a separate
# `cargo build` first would compile it and the crate twice: the dev-dependencies widen some
# crates' features).
cargo test --locked

echo "==> end-to-end tests with Authlib, openid-client, go-oidc and Chromium"
{ need node && need npm; } || apt_install nodejs npm
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  { echo "openid-client needs Node.js 20 or newer (found $(node --version))" >&2; exit 1; }
(cd tests/e2e/openid-client && npm ci --silent --no-audit --no-fund)
(cd tests/e2e/browser && npm ci --silent --no-audit --no-fund)
# node-oidc-provider as an upstream identity provider (tests/e2e/test_upstream.py).
(cd tests/e2e/upstream && npm ci --silent --no-audit --no-fund)
(cd tests/e2e/mcp-ts && npm ci --silent --no-audit --no-fund)
# The browser test (tests/e2e/test_browser.py) drives Debian's Chromium with playwright-core,
# which never downloads a browser of its own. Installed once, quietly; if it cannot be, the
# test is skipped and says why.
CHROMIUM=${AUTHRIM_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "==> installing Chromium for the browser test"
  apt_log=$(mktemp)
  if ! (export DEBIAN_FRONTEND=noninteractive; apt_install chromium) >"$apt_log" 2>&1; then
    tail -n 20 "$apt_log" >&2
    export AUTHRIM_E2E_NO_BROWSER="installing Debian's chromium failed (scripts/test.sh)"
  fi
  rm -f "$apt_log"
fi
# Japanese glyphs for the pages' screenshots (tests/e2e/test_pages.py); without them the
# screenshots show boxes, and the test says so but does not fail.
if [ -x "$CHROMIUM" ] && ! fc-list 2>/dev/null | grep -qi "noto sans cjk"; then
  (export DEBIAN_FRONTEND=noninteractive; apt_install fonts-noto-cjk) >/dev/null 2>&1 || echo "fonts-noto-cjk could not be installed: Japanese screenshots will show boxes" >&2
fi
VENV=target/e2e-venv
[ -x "$VENV/bin/pytest" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/e2e/requirements.txt
# Two workers (pytest-xdist), each module whole on one of them (loadfile: a module's tests share
# its servers and its screenshot folder), the longest modules first (conftest.py, LONGEST_FIRST;
# --no-loadscope-reorder keeps that order instead of xdist's by number of tests). Most of the
# suite's time is a browser walk busy on one core, or waits: two at once use both cores.
AUTHRIM_BIN=target/debug/authrim "$VENV/bin/pytest" tests/e2e -q -n 2 --dist loadfile --no-loadscope-reorder

echo "==> load-testing pipeline at smoke rates"
python3 -m unittest discover -s load-testing -p 'test_*.py'
load-testing/run.sh --quick --bin target/debug/authrim

# The container image, where a container engine runs (CI machines without one, such as this
# project's, cannot build it: docs/operations.md gives the manual check for those). The build
# compiles a release binary inside the image, so it is the slowest step when it runs.
image_built=false
for builder in docker podman; do
  if command -v "$builder" >/dev/null 2>&1 && "$builder" info >/dev/null 2>&1; then
    echo "==> container image ($builder build, then the image's own authrim --help)"
    "$builder" build -t authrim:test .
    "$builder" run --rm authrim:test --help >/dev/null
    image_built=true
    break
  fi
done
$image_built || echo "==> container image: no container engine runs here (docker/podman info), not built"
