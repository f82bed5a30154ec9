#!/usr/bin/env bash
# Installs k6 (pinned version) into load-testing/.bin/ with `go install`.
# Skips the build when load-testing/.bin/k6 already reports that version.
# Prints the path of the k6 binary on stdout (last line).
set -euo pipefail

K6_VERSION="v1.8.1"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN_DIR="${SCRIPT_DIR}/.bin"
K6="${BIN_DIR}/k6"

installed_version() {
    # `k6 version` prints e.g. "k6 v1.8.1 (commit/..., go1.x, linux/amd64)"
    "$K6" version 2>/dev/null | awk 'NR==1 {print $2}'
}

if [[ -x "$K6" ]] && [[ "$(installed_version)" == "$K6_VERSION" ]]; then
    echo "k6 ${K6_VERSION} already installed" >&2
    echo "$K6"
    exit 0
fi

if ! command -v go >/dev/null 2>&1; then
    echo "error: 'go' not found in PATH; install Go (https://go.dev/dl/) to build k6 ${K6_VERSION}," >&2
    echo "       or place a k6 ${K6_VERSION} binary at ${K6}" >&2
    exit 1
fi

mkdir -p "$BIN_DIR"
echo "building k6 ${K6_VERSION} with $(go version) (this takes a few minutes)..." >&2
GOBIN="$BIN_DIR" go install "go.k6.io/k6@${K6_VERSION}"

if [[ ! -x "$K6" ]]; then
    echo "error: go install finished but ${K6} is missing" >&2
    exit 1
fi
got="$(installed_version)"
if [[ "$got" != "$K6_VERSION" ]]; then
    echo "error: ${K6} reports version '${got}', expected ${K6_VERSION}" >&2
    exit 1
fi
echo "installed k6 ${K6_VERSION}" >&2
echo "$K6"
