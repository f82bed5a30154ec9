#!/usr/bin/env bash
# Fetches the Keycloak distribution (pinned below) into load-testing/peers/keycloak/.bin/ and
# prints the path of its home (…/.bin/keycloak-VERSION). Skips the work when that home is
# already unpacked at the pinned version.
#
# The tarball is the Maven artifact org.keycloak:keycloak-quarkus-dist:VERSION:tar.gz, resolved
# by Maven itself (`mvn dependency:copy`: the repositories, mirrors and proxy of the user's
# Maven settings, and Maven's own checksum check), not a download from a hard-coded address.
# It is then checked against the SHA-512 pinned below (the one published beside the artifact).
# Needs mvn, sha512sum and tar; running it needs a JDK (26.7.3 still runs on OpenJDK 17,
# deprecated since Keycloak 25).
#   load-testing/peers/keycloak/fetch.sh      # → …/.bin/keycloak-26.7.3
set -euo pipefail
VERSION=26.7.3
SHA512=664c8ac2997d94b69825af70acc3a6017a7a53a1504a6e21b2d82a04e5f53593b30cabdf80ffe3eb661f13442a57fbc15c4186a1899f2841e8145532e5ae7e1c
ARTIFACT=org.keycloak:keycloak-quarkus-dist:$VERSION:tar.gz
HERE=$(cd "$(dirname "$0")" && pwd)
HOME_KC="$HERE/.bin/keycloak-$VERSION"

# .unpacked is written last, after a verified download unpacked completely.
if [ -f "$HOME_KC/.unpacked" ] && grep -qx "Keycloak - Version $VERSION" "$HOME_KC/version.txt" 2>/dev/null; then
  echo "$HOME_KC"
  exit 0
fi

mkdir -p "$HERE/.bin"
WORK=$(mktemp -d "$HERE/.bin/fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "fetch.sh: resolving $ARTIFACT with Maven (~170 MB)" >&2
mvn -B -q -Dstyle.color=never -Dartifact="$ARTIFACT" -DoutputDirectory="$WORK" -Dmdep.stripVersion=true \
  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy >&2
mv "$WORK/keycloak-quarkus-dist.tar.gz" "$WORK/dist.tar.gz"
echo "$SHA512  $WORK/dist.tar.gz" | sha512sum -c --quiet - ||
  { echo "fetch.sh: checksum mismatch for $ARTIFACT" >&2; exit 1; }
tar -xzf "$WORK/dist.tar.gz" -C "$WORK"
[ -x "$WORK/keycloak-$VERSION/bin/kc.sh" ] || { echo "fetch.sh: unexpected archive layout" >&2; exit 1; }
rm -rf "$HOME_KC"
mv "$WORK/keycloak-$VERSION" "$HOME_KC"
touch "$HOME_KC/.unpacked"
echo "$HOME_KC"
