#!/usr/bin/env bash
# ci/upgrade.sh -- a rolling upgrade from the previous release to this tree,
# on PostgreSQL and on MariaDB.
#
#   bash ci/upgrade.sh                      # both servers (about 2 minutes)
#   SQLEASE_UPGRADE_DIALECTS=postgres bash ci/upgrade.sh
#
# Builds the previous release (ci/previous-release: its version and commit)
# from this clone's history -- `git archive` of that commit into a
# temporary directory, `scons build/bin/sqlease` there -- and this tree's
# build/bin/sqlease, then per server (started by ci/postgres.sh and
# ci/mariadb.sh, stopped by them) runs ci/fleet.py upgrade: the old
# binary migrates the table and holds it with two instances; the new
# migrate runs under that live hold, which must go on unchanged; two new
# instances join; the lease goes from old to new and back across
# SIGKILLs and SIGTERMs of the holder, with one holder at a time (an
# exclusive flock taken by every CMD, tokens strictly increasing) and a
# successor within its bound.  The temporary directory is removed on
# every exit path.  Exit status 0 only if the builds and every server's
# run passed; the fleets' counts go to $SQLEASE_RESULT_DIR.
#
# Environment: SQLEASE_UPGRADE_DIALECTS (default "postgres mariadb"), JOBS.

set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
DIALECTS=${SQLEASE_UPGRADE_DIALECTS:-postgres mariadb}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

log() { printf 'upgrade.sh: %s\n' "$*" >&2; }

read -r PREV_VERSION PREV_COMMIT < <(sed -e 's/#.*//' "$HERE/previous-release" | awk 'NF' | head -n 1)
if [ -z "${PREV_COMMIT:-}" ]; then
    log "ci/previous-release names no commit"
    exit 2
fi
if ! git -C "$TOP" cat-file -e "$PREV_COMMIT^{commit}" 2>/dev/null; then
    log "commit $PREV_COMMIT (release $PREV_VERSION) is not in this clone; a shallow clone?" \
        "(git fetch --unshallow)"
    exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sqlease-upgrade-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0=$(date +%s)
printf '==================== upgrade: build %s (%s) ====================\n' \
    "$PREV_VERSION" "${PREV_COMMIT:0:12}"
mkdir -p "$WORK/old"
if ! git -C "$TOP" archive --format=tar "$PREV_COMMIT" | tar -x -C "$WORK/old"; then
    log "cannot unpack $PREV_COMMIT"
    exit 2
fi
if ! (cd "$WORK/old" && scons -Q -j"$JOBS" build/bin/sqlease) >"$WORK/old-build.log" 2>&1; then
    tail -n 30 "$WORK/old-build.log"
    log "building release $PREV_VERSION failed"
    exit 2
fi
OLD=$WORK/old/build/bin/sqlease
got=$("$OLD" --version)
if [ "$got" != "sqlease $PREV_VERSION" ]; then
    log "the build of $PREV_COMMIT says '$got', not 'sqlease $PREV_VERSION'"
    exit 2
fi
printf '==================== upgrade: build this tree ====================\n'
(cd "$TOP" && scons -Q -j"$JOBS" build/bin/sqlease) || { log "building this tree failed"; exit 2; }
NEW=$TOP/build/bin/sqlease
log "from $got to $("$NEW" --version), built in $(( $(date +%s) - t0 )) s"

rows=()
failed=0
for d in $DIALECTS; do
    s=$(date +%s)
    printf '\n==================== upgrade: %s ====================\n' "$d"
    # shellcheck disable=SC2016  # expanded by the inner shell, where it is set
    inner=(bash -c 'exec python3 "$0" upgrade --old-bin "$1" --new-bin "$2" --dsn "$SQLEASE_TEST_DSN" --label "upgrade-$3"'
           "$HERE/fleet.py" "$OLD" "$NEW" "$d")
    case $d in
    postgres) bash "$HERE/postgres.sh" "${inner[@]}" ;;
    mariadb) SQLEASE_MARIADB_OPTIONS=0 bash "$HERE/mariadb.sh" "${inner[@]}" ;;
    *) log "unknown dialect '$d'"; false ;;
    esac
    rc=$?
    [ "$rc" = 0 ] || failed=1
    rows+=("$(printf '%-10s %-8s %4d s' "$d" "$([ "$rc" = 0 ] && echo PASS || echo "FAIL($rc)")" \
              $(( $(date +%s) - s )))")
done

printf '\n==================== upgrade summary: %s -> this tree ====================\n' \
    "$PREV_VERSION"
printf '%s\n' "${rows[@]}"
echo "upgrade: $(( $(date +%s) - t0 )) s in all"
[ "$failed" = 0 ] && echo "upgrade: one holder across the versions" || echo "upgrade: FAILED"
exit "$failed"
