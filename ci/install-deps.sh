#!/usr/bin/env bash
# Install the Debian packages listed in ci/packages.txt.
#
#   ci/install-deps.sh          apt-get update, then install (sudo if not root)
#   ci/install-deps.sh --list   print the package names only
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mapfile -t packages < <(sed -e 's/#.*//' "$here/packages.txt" | tr -s ' \t' '\n\n' | grep -v '^$')

if [ "${1:-}" = "--list" ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi

echo "==== apt-get update ===="
"${sudo[@]}" apt-get update
echo "==== apt-get install: ${packages[*]} ===="
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${packages[@]}"
