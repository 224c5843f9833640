#!/usr/bin/env bash
# Install the Debian packages sqlease needs.
#
#   ci/install-deps.sh          build + the embedded SQLite default (ci/packages.txt)
#   ci/install-deps.sh --full   also the database servers and the Windows
#                               cross-build the whole test suite uses
#                               (ci/packages-full.txt)
#   ... --list                  print the package names only
#
# apt-get update first, then install (through sudo when not root).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
lists=("$here/packages.txt")
list_only=0
for arg in "$@"; do
    case $arg in
    --full) lists+=("$here/packages-full.txt") ;;
    --list) list_only=1 ;;
    *) echo "usage: $0 [--full] [--list]" >&2; exit 64 ;;
    esac
done
mapfile -t packages < <(sed -e 's/#.*//' "${lists[@]}" | tr -s ' \t' '\n\n' | grep -v '^$')

if [ "$list_only" = 1 ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi

# The database servers (and prometheus, for its promtool) come as
# packages whose scripts start a system service on install.  The tests
# start their own servers on loopback in temporary directories and stop
# them; a system service would be left running.  policy-rc.d answering
# 101 tells invoke-rc.d not to start anything; one that is already
# there (a container's) is kept, one put here is removed on every exit.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    "${sudo[@]}" sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
    trap '"${sudo[@]}" rm -f "$policy"' EXIT
fi

echo "==== apt-get update ===="
"${sudo[@]}" apt-get update
echo "==== apt-get install: ${packages[*]} ===="
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${packages[@]}"
