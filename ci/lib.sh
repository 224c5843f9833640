# ci/lib.sh -- helpers shared by the scripts that start database servers
# (ci/postgres.sh, ci/mariadb.sh) or step their clocks (ci/ha.sh).
# Sourced, not run.

# find_driver FILE: the path of an ODBC driver library, looked up in
# $ODBC_DRIVER_DIR and the usual Debian/Ubuntu places.
find_driver() {
    local name=$1 dir multiarch=""
    multiarch=$(gcc -print-multiarch 2>/dev/null || true)
    for dir in ${ODBC_DRIVER_DIR:-} ${multiarch:+/usr/lib/$multiarch/odbc} \
               /usr/lib/x86_64-linux-gnu/odbc /usr/lib/aarch64-linux-gnu/odbc \
               /usr/lib64 /usr/lib/odbc /usr/lib /usr/local/lib; do
        if [ -f "$dir/$name" ]; then
            printf '%s\n' "$dir/$name"
            return 0
        fi
    done
    return 1
}

# find_faketime: the path of libfaketime's multithreaded preload library
# (package faketime), which the scripts that step a server's clock load.
find_faketime() {
    local f
    for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 \
             /usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1 \
             /usr/lib/faketime/libfaketimeMT.so.1; do
        if [ -f "$f" ]; then
            printf '%s\n' "$f"
            return 0
        fi
    done
    return 1
}

# free_port FIRST: the first port from FIRST on (50 tried) where nothing
# accepts connections on loopback, so that concurrent runs and servers
# already on the machine are left alone.
free_port() {
    local p
    for p in $(seq "$1" $(($1 + 50))); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            printf '%s\n' "$p"
            return 0
        fi
    done
    return 1
}
