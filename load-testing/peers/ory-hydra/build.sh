#!/usr/bin/env bash
# Builds Ory Hydra (pinned below) into load-testing/peers/ory-hydra/.bin/hydra and prints its
# path. Skips the build when that binary already reports the pinned version.
#
# Source comes from the Go module proxy, not GitHub releases: the module zip of
# github.com/ory/hydra/v2, copied to a scratch directory (the module cache is read-only) and
# built there, so go.mod's other replace directive (pop → ory/pop) is honoured. The zip lacks
# internal/httpclient (a nested module), which go.mod replaces github.com/ory/hydra-client-go/v2
# with; that replace is dropped, so the CLI uses hydra-client-go at the version go.mod requires
# (the server does not use it). Build tags and cgo are those of Hydra's Makefile/Dockerfile
# (sqlite needs cgo: mattn/go-sqlite3). Needs go and a C compiler.
#   load-testing/peers/ory-hydra/build.sh      # → …/.bin/hydra
set -euo pipefail
VERSION=v2.3.0
COMMIT=ee8c339ddada3a42529c0416897abc32bad03bbb # refs/tags/v2.3.0, from the proxy's .info
HERE=$(cd "$(dirname "$0")" && pwd)
BIN="$HERE/.bin/hydra"

if [ -x "$BIN" ] && "$BIN" version 2>/dev/null | grep -q "^Version: *$VERSION\$"; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: go is required" >&2; exit 1; }
SRC=$(go mod download -json "github.com/ory/hydra/v2@$VERSION" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(d["Error"]) if d.get("Error") else print(d["Dir"])')
WORK=$(mktemp -d)
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
cp -r "$SRC/." "$WORK/"
chmod -R u+w "$WORK"
cd "$WORK"
go mod edit -dropreplace github.com/ory/hydra-client-go/v2
echo "build.sh: building Ory Hydra $VERSION (a few minutes on 2 cores)" >&2
mkdir -p "$HERE/.bin"
GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=1 go build \
  -tags sqlite,sqlite_omit_load_extension \
  -ldflags "-X github.com/ory/hydra/v2/driver/config.Version=$VERSION -X github.com/ory/hydra/v2/driver/config.Commit=$COMMIT -X github.com/ory/hydra/v2/driver/config.Date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  -o "$BIN.tmp" .
mv "$BIN.tmp" "$BIN"
"$BIN" version | grep -q "^Version: *$VERSION\$" || { echo "build.sh: built binary does not report $VERSION" >&2; exit 1; }
echo "$BIN"
