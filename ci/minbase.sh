#!/usr/bin/env bash
# ci/minbase.sh -- the README's set-up commands, run as written in a
# minimal Debian 12 root, so that a package the scripts need but a fresh
# machine lacks fails here and not first on a user's machine.  (A machine
# that already has a tool, such as `make`, hides its absence from every
# other check.)
#
#   bash ci/minbase.sh                the demo command, then the full package
#                                     install and the install check (CI)
#   bash ci/minbase.sh --full-suite   the README's whole test command (about
#                                     as long as CI itself)
#   bash ci/minbase.sh --keep         leave the root for a look (path printed)
#
# Needs root and debootstrap.  Makes `debootstrap --variant=minbase
# bookworm` in a temporary directory from the Debian mirror apt uses on
# this machine, gives it this machine's Debian apt sources, clones this
# repository's HEAD into it, and runs in a chroot the commands of the
# README's blocks readme-setup-demo and readme-setup-test (read from
# README.md by tests/docblocks.py, so they cannot drift).  In the default
# mode the second command's package install runs, then ci/install-check.sh
# instead of the whole suite.  Daemons that packages would start are
# refused by a policy-rc.d (a chroot has no init; the tests start their own
# servers).  On every exit the processes left in the root are killed, the
# mounts undone and the root removed.
#
# Measured on a 2-core machine: debootstrap about 1.5 minutes, the demo 1,
# the full package install about 3, the install check 1.5.
set -uo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP" || exit 2
# shellcheck source=ci/results.sh
. ci/results.sh

MODE=ci
KEEP=0
for a in "$@"; do
    case $a in
    --full-suite) MODE=full ;;
    --keep) KEEP=1 ;;
    *) echo "usage: $0 [--full-suite] [--keep]" >&2; exit 64 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "minbase.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null 2>&1 ||
    { echo "minbase.sh: debootstrap is not installed (ci/packages-full.txt)" >&2; exit 2; }

# The Debian mirror apt uses here: the first deb URI serving bookworm, in
# the one-line or the deb822 format.
mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" && $0 ~ / bookworm / {
                 for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'BEGIN { RS = ""; FS = "\n" }
             /(^|\n)Suites:[^\n]*(^| )bookworm( |\n|$)/ && /(^|\n)Types:[^\n]*deb( |\n|$)/ {
                 for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, " "); print u[2]; exit } }' "$f"
    done
}
MIRROR=$(mirror | head -n 1)
MIRROR=${MIRROR:-http://deb.debian.org/debian}

DEMO=$(python3 tests/docblocks.py readme-setup-demo) || exit 2
TEST=$(python3 tests/docblocks.py readme-setup-test) || exit 2
case $TEST in
*"&& bash ci/test.sh"*) INSTALL=${TEST%%&& bash ci/test.sh*} ;;
*) echo "minbase.sh: the README's test command no longer ends with 'bash ci/test.sh': $TEST" >&2; exit 2 ;;
esac

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-minbase-XXXXXX")
ROOT=$WORK/root
MOUNTS=()

# Processes whose root is ours (what a test left behind), then the
# mounts, innermost first, then the files.
# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
    local p r i
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        case $r in "$ROOT" | "$ROOT"/*) kill -KILL "${p#/proc/}" 2>/dev/null ;; esac
    done
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null
    done
    if [ "$KEEP" = 1 ]; then
        echo "minbase.sh: root kept at $ROOT (mounts undone)"
    else
        rm -rf --one-file-system "$WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0=$(date +%s)
lap() { echo "---- $1: $(($(date +%s) - t0)) s since the start"; }

echo "==== debootstrap --variant=minbase bookworm from $MIRROR"
if ! debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
    tail -n 30 "$WORK/debootstrap.log"
    echo "minbase.sh: debootstrap failed"
    results_write minbase 0 1
    exit 1
fi
lap debootstrap

# This machine's Debian sources (updates and security too), so the root
# installs the versions this machine would.
rm -f "$ROOT/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && grep -q 'debian' "$f" && grep -q 'bookworm' "$f" && cp "$f" "$ROOT$f"
done
[ -n "$(ls "$ROOT"/etc/apt/sources.list* 2>/dev/null)" ] ||
    echo "deb $MIRROR bookworm main" >"$ROOT/etc/apt/sources.list"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"

# /dev/shm is a mount of its own that a bind of /dev does not carry: a
# fresh machine has it, and PostgreSQL's shared memory needs it.
for m in proc sys dev dev/pts dev/shm; do
    case $m in
    proc) mount -t proc proc "$ROOT/proc" ;;
    sys) mount -t sysfs sys "$ROOT/sys" ;;
    # Private, so that what is mounted on the root's /dev/pts and
    # /dev/shm never shows on this machine's (where / is shared, as
    # under systemd, a bind is a peer of what it binds).
    dev) mount --bind /dev "$ROOT/dev" && mount --make-private "$ROOT/dev" ;;
    dev/pts) mount -t devpts devpts "$ROOT/dev/pts" ;;
    dev/shm) mount -t tmpfs -o mode=1777,nosuid,nodev shm "$ROOT/dev/shm" ;;
    esac || { echo "minbase.sh: mounting $m failed"; exit 2; }
    MOUNTS+=("$ROOT/$m")
done

git clone -q "$TOP" "$ROOT/root/sqlease" || { echo "minbase.sh: git clone failed"; exit 2; }

# in_root COMMAND: run it in the clone inside the root, as root, with a
# login-like environment and nothing of ours.
in_root() {
    chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI="${CI:-}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        bash -c "cd /root/sqlease && $1"
}

passed=0
failed=0
run() { # run LABEL COMMAND
    local rc=0
    echo "==== in the minimal root: $2"
    in_root "$2" || rc=$?
    if [ "$rc" = 0 ]; then
        echo "ok    $1"
        passed=$((passed + 1))
    else
        echo "FAIL  $1 (exit $rc)"
        failed=$((failed + 1))
    fi
    lap "$1"
    return "$rc"
}

run "the README's demo command" "$DEMO"
if [ "$MODE" = full ]; then
    run "the README's test command" "$TEST"
else
    run "the README's package install for the tests" "$INSTALL" &&
        run "the install check" "bash ci/install-check.sh"
fi

echo "minbase: $passed passed, $failed failed in $(($(date +%s) - t0)) s"
results_write minbase "$passed" "$failed"
[ "$failed" = 0 ]
