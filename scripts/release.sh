#!/usr/bin/env bash
# A release: the binary, a tarball with it and what an operator needs beside it, the
# tarball's SHA-256, and the container image from the Dockerfile where a container builder
# runs.
#   scripts/release.sh           # dist/authrim-VERSION-TARGET.tar.gz and .sha256
#   scripts/release.sh --image   # also the image authrim:VERSION (docker, else podman);
#                                # fails when neither has a running engine
# The tarball holds bin/authrim, LICENSE, README.md, authrim.example.toml and
# packaging/authrim.service. The binary is built with the versions in Cargo.lock (--locked).
set -euo pipefail
cd "$(dirname "$0")/.."

image=false
for arg in "$@"; do
  case "$arg" in
    --image) image=true ;;
    *) echo "usage: scripts/release.sh [--image]" >&2; exit 2 ;;
  esac
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
target=$(rustc -vV | sed -n 's/^host: //p')
name="authrim-$version-$target"

echo "==> cargo build --release --locked ($target)"
cargo build --release --locked --bin authrim

rm -rf "dist/$name"
mkdir -p "dist/$name/bin" "dist/$name/packaging"
cp target/release/authrim "dist/$name/bin/"
strip "dist/$name/bin/authrim" 2>/dev/null || true
cp LICENSE README.md authrim.example.toml "dist/$name/"
cp packaging/authrim.service "dist/$name/packaging/"
tar -C dist -czf "dist/$name.tar.gz" "$name"
(cd dist && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
rm -rf "dist/$name"
# The binary must run where it was built: a release that cannot print its own help is no release.
tar -xzOf "dist/$name.tar.gz" "$name/bin/authrim" > "dist/.check-authrim" && chmod +x "dist/.check-authrim"
"dist/.check-authrim" --help >/dev/null
rm -f "dist/.check-authrim"
echo "dist/$name.tar.gz"

if $image; then
  builder=""
  for b in docker podman; do
    if command -v "$b" >/dev/null 2>&1 && "$b" info >/dev/null 2>&1; then builder=$b; break; fi
  done
  if [ -z "$builder" ]; then
    echo "release.sh: no container engine answers (docker info / podman info); the image was not built" >&2
    exit 1
  fi
  echo "==> $builder build -t authrim:$version ."
  "$builder" build -t "authrim:$version" .
  # The image must start the server's CLI as its non-root user.
  "$builder" run --rm "authrim:$version" --help >/dev/null
  echo "authrim:$version"
fi
