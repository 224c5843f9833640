/*
 * file.c -- files and directories the tool writes or reads, on POSIX
 * (see os.h): the metrics file replaced in one step, the private file
 * --dsn-file reads (and the owner and mode it must have), and the demo's
 * private directory, its event file and its own executable.
 */
#include "os_posix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

int sqle_file_replace(const char *from, const char *to)
{
    return rename(from, to) == 0 ? 0 : -1;
}

int cli_sys_make_temp_dir(const char *prefix, char *buf, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    int n;

    /* The directory ends up inside an ODBC connection string: a TMPDIR
     * with ';', '{' or '}' would change its meaning. */
    if (tmp == NULL || tmp[0] == '\0' || strpbrk(tmp, ";{}") != NULL)
        tmp = "/tmp";
    n = snprintf(buf, cap, "%s/%s-XXXXXX", tmp, prefix);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    return mkdtemp(buf) != NULL ? 0 : -1;
}

int cli_sys_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    int rc = 0;

    if (d == NULL)
        return errno == ENOENT ? 0 : -1;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            rc = -1;
    }
    closedir(d);
    if (rmdir(dir) != 0)
        rc = -1;
    return rc;
}

int cli_sys_append_line(const char *path, const char *line)
{
    size_t len = strlen(line);
    ssize_t w;
    int fd;

    do
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    do
        w = write(fd, line, len);
    while (w < 0 && errno == EINTR);
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

char *cli_sys_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;

    if (f == NULL)
        return errno == ENOENT ? calloc(1, 1) : NULL;
    for (;;) {
        size_t n;
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap + 65536);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap += 65536;
        }
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

/* One line is the connection string; only blank lines may follow it. */
static int one_line(char *buf, size_t len, char *err, size_t errcap)
{
    size_t n = strcspn(buf, "\r\n");

    for (size_t i = n; i < len; i++)
        if (buf[i] != '\r' && buf[i] != '\n' && buf[i] != ' ' && buf[i] != '\t') {
            snprintf(err, errcap, "holds more than one line: write the connection string"
                                  " on one line");
            return -1;
        }
    buf[n] = '\0';
    if (n == 0) {
        snprintf(err, errcap, "is empty: write the connection string (or a DSN name) on"
                              " its first line");
        return -1;
    }
    return 0;
}

/* "uid 1001 (alice)", or "uid 1001" for a uid without a name; with
 * `comma`, "uid 1001, alice" (for inside parentheses). */
static void uid_text(uid_t uid, int comma, char *buf, size_t cap)
{
    struct passwd *pw = getpwuid(uid);

    if (pw != NULL && pw->pw_name != NULL && pw->pw_name[0] != '\0')
        snprintf(buf, cap, comma ? "uid %lu, %s" : "uid %lu (%s)", (unsigned long)uid,
                 pw->pw_name);
    else
        snprintf(buf, cap, "uid %lu", (unsigned long)uid);
}

/* What chown takes for uid: its name, else the number. */
static void uid_word(uid_t uid, char *buf, size_t cap)
{
    struct passwd *pw = getpwuid(uid);

    if (pw != NULL && pw->pw_name != NULL && pw->pw_name[0] != '\0')
        snprintf(buf, cap, "%s", pw->pw_name);
    else
        snprintf(buf, cap, "%lu", (unsigned long)uid);
}

/* "owned by uid 1001 (alice), not by you (uid 0, root)" (and "or root"
 * when you are not root: a file of root's is accepted, as ssh does). */
static int owner_text(const char *what, uid_t owner, char *buf, size_t cap)
{
    char theirs[300], yours[300];

    uid_text(owner, 0, theirs, sizeof theirs);
    uid_text(geteuid(), 1, yours, sizeof yours);
    return snprintf(buf, cap, "%sowned by %s, not by you (%s)%s", what, theirs, yours,
                    geteuid() != 0 ? " or root" : "");
}

/* path as one shell word, for a command the message tells the user to
 * run: as it is if it has only characters no shell treats specially,
 * else in single quotes (a quote inside as '\''); "./" before a path
 * that starts with '-', so that chmod does not take it for an option. */
static void shell_word(const char *path, char *buf, size_t cap)
{
    static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789/._-+,:@%=";
    const char *dot = path[0] == '-' ? "./" : "";
    size_t k;

    if (path[0] != '\0' && strspn(path, plain) == strlen(path)) {
        snprintf(buf, cap, "%s%s", dot, path);
        return;
    }
    k = (size_t)snprintf(buf, cap, "%s'", dot);
    for (; *path != '\0' && k + 6 < cap; path++) {
        if (*path == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else {
            buf[k++] = *path;
        }
    }
    buf[k++] = '\'';
    buf[k] = '\0';
}

/* "read", "write", "read and write", ... for the rwx bits of one class. */
static const char *access_words(unsigned bits)
{
    static const char *const words[8] = {
        "", "execute", "write", "write and execute",
        "read", "read and execute", "read and write", "read, write and execute"};
    return words[bits & 7];
}

/* Who besides the owner may do what: "group can read it", "group and
 * others can read it", "group can read and write it, others can read it". */
static void mode_text(mode_t mode, char *buf, size_t cap)
{
    unsigned g = (mode >> 3) & 7, o = mode & 7;

    if (g == o)
        snprintf(buf, cap, "group and others can %s it", access_words(g));
    else if (o == 0)
        snprintf(buf, cap, "group can %s it", access_words(g));
    else if (g == 0)
        snprintf(buf, cap, "others can %s it", access_words(o));
    else
        snprintf(buf, cap, "group can %s it, others can %s it", access_words(g),
                 access_words(o));
}

/* What a file's type is called in a message. */
static const char *type_text(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a named pipe";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a regular file";
}

/*
 * What is wrong with the file `st` describes (reached by `path`) as the
 * place of a password and of the name of the driver library this process
 * loads: it must be a regular file, owned by this process's effective
 * user or by root (as ssh accepts), that neither its group nor others may
 * read, write or execute (as ssh asks of a key, and libpq of .pgpass).
 * Another owner, or anyone who may write it, chooses the Driver= that is
 * loaded: run as root, their code would run as root.  Returns 0, or -1
 * with what is wrong and the command that fixes it in err.
 */
static int private_enough(const char *path, const struct stat *st, char *err, size_t errcap)
{
    uid_t me = geteuid();
    int owner_bad = st->st_uid != me && st->st_uid != 0;
    int mode_bad = (st->st_mode & (S_IRWXG | S_IRWXO)) != 0;
    char word[1100], who[100], modes[160], fix[2400];
    size_t n = 0, f = 0;

    if (!S_ISREG(st->st_mode)) {
        snprintf(err, errcap, "is %s, not a file: name the file that holds the connection"
                              " string", type_text(st->st_mode));
        return -1;
    }
    if (!owner_bad && !mode_bad)
        return 0;
    shell_word(path, word, sizeof word);
    err[0] = fix[0] = '\0';
    if (owner_bad) {
        n = (size_t)owner_text("", st->st_uid, err, errcap);
        uid_word(me, who, sizeof who);
        f = (size_t)snprintf(fix, sizeof fix, "chown %s %s", who, word);
    }
    if (mode_bad) {
        mode_text(st->st_mode, modes, sizeof modes);
        if (n < errcap)
            n += (size_t)snprintf(err + n, errcap - n, "%s%s (mode %04o)",
                                  owner_bad ? ", and " : "", modes,
                                  (unsigned)(st->st_mode & 07777));
        /* The owner keeps its own bits, and must be able to read. */
        if (f < sizeof fix)
            snprintf(fix + f, sizeof fix - f, "%schmod %03o %s", f > 0 ? " && " : "",
                     (unsigned)((st->st_mode & S_IRWXU) | S_IRUSR), word);
    }
    /* Only root gives a file away, or changes the mode of one not its own. */
    if (n < errcap)
        snprintf(err + n, errcap - n, "; %s: %s",
                 st->st_uid != me && me != 0 ? "as root, run" : "run", fix);
    return -1;
}

/* The same file (device and inode). */
static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* One attempt of cli_os_read_private_file: 0, -1 with why in err, or 1
 * when the name changed between the checks and the open (a file
 * replaced by a rename, as secrets managers do): worth another try. */
static int read_private_once(const char *path, char *buf, size_t cap, char *err,
                             size_t errcap)
{
    struct stat link, target, st, again;
    size_t len = 0;
    int fd;

    /*
     * A symbolic link is followed (a secrets manager often points one at
     * the file it rewrites), but only one owned by this user or root:
     * another user's link chooses which file is read.  The type is looked
     * at before opening, so that a named pipe or a device is never opened.
     */
    if (lstat(path, &link) != 0) {
        if (errno == ENOENT)
            snprintf(err, errcap, "does not exist");
        else
            snprintf(err, errcap, "cannot open it: %s", strerror(errno));
        return -1;
    }
    if (S_ISLNK(link.st_mode) && link.st_uid != geteuid() && link.st_uid != 0) {
        int n = owner_text("is a symbolic link ", link.st_uid, err, errcap);
        if (n >= 0 && (size_t)n < errcap)
            snprintf(err + n, errcap - (size_t)n, ": its owner chooses the file read; name"
                                                  " the file itself");
        return -1;
    }
    if (stat(path, &target) != 0) {
        if (errno == ENOENT && S_ISLNK(link.st_mode))
            snprintf(err, errcap, "is a symbolic link to a file that does not exist");
        else if (errno == ENOENT)
            return 1;
        else
            snprintf(err, errcap, "cannot open it: %s", strerror(errno));
        return -1;
    }
    if (private_enough(path, &target, err, errcap) != 0)
        return -1;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errcap, "cannot open it: %s", strerror(errno));
        return -1;
    }
    /*
     * What was opened (fstat), not a name someone may have changed since,
     * must be the file checked: the same inode, the checks passed again,
     * and the name still the link (or file) that was looked at.
     */
    if (fstat(fd, &st) != 0) {
        snprintf(err, errcap, "cannot read it: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (private_enough(path, &st, err, errcap) != 0) {
        close(fd);
        return -1;
    }
    if (!same_file(&st, &target) || lstat(path, &again) != 0 || !same_file(&link, &again)) {
        close(fd);
        return 1;
    }
    while (len + 1 < cap) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errcap, "cannot read it: %s", strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    if (len + 1 >= cap) {
        snprintf(err, errcap, "is larger than %zu bytes", cap - 2);
        return -1;
    }
    buf[len] = '\0';
    return one_line(buf, len, err, errcap);
}

int cli_os_read_private_file(const char *path, char *buf, size_t cap, char *err,
                             size_t errcap)
{
    for (int tries = 0; tries < 3; tries++) {
        int r = read_private_once(path, buf, cap, err, errcap);
        if (r <= 0)
            return r;
    }
    snprintf(err, errcap, "kept changing while it was opened");
    return -1;
}

int cli_sys_self_exe(const char *argv0, char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);

    if (n > 0) {
        buf[n] = '\0';
        return 0;
    }
    if (argv0 == NULL || strlen(argv0) >= cap)
        return -1;
    /* Without /proc: argv0 as given, made absolute if it names a path. */
    if (strchr(argv0, '/') != NULL && realpath(argv0, buf) != NULL)
        return 0;
    snprintf(buf, cap, "%s", argv0);
    return 0;
}
