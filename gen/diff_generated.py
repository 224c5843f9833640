#!/usr/bin/env python3
"""Compare the dialect table a git revision generates with the work tree's.

Usage: gen/diff_generated.py [REV]      (default: HEAD)
       gen/diff_generated.py --dump     (the work tree's statements)

A change that only restructures templates/dialects.toml (a statement
moved to [common], a snippet instead of a copied phrase) must not change
one byte of the SQL any dialect sends.  This runs REV's own generator on
REV's own template, and the work tree's on the work tree's, each into a
temporary directory, and compares the generated dialects.c and
dialects.h byte for byte.  It prints one line per dialect with how many
statements it has, and on a difference, every statement (row, field,
part: SQL and bound parameters) that differs, read back from the two
generated files.  Exit status 0: identical; 1: they differ; 2: usage or
a failed generator run.  Writes only under a temporary directory.
"""

import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = "templates/dialects.toml"
GENERATOR = "gen/gen_dialects.py"

TOKEN_RE = re.compile(r'\s+|/\*.*?\*/|"(?:[^"\\]|\\.)*"|[{},;=\[\]]|[^\s{},;=\[\]"/]+|/',
                      re.S)


ESCAPES = {"n": b"\n", "t": b"\t", "\\": b"\\", '"': b'"', "?": b"?"}


def c_unescape(lit):
    """The text of one C string literal (quotes included) as the
    generator writes them: \\\\ \\" \\n \\t \\? and octal bytes."""
    out = bytearray()
    body = lit[1:-1]
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in "01234567":
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
            continue
        out += ESCAPES[nxt]
        i += 2
    return out.decode("utf-8")


def tokens(text):
    """C tokens, adjacent string literals joined into one ('S', text)."""
    res = []
    for m in TOKEN_RE.finditer(text):
        tok = m.group(0)
        if tok.isspace():
            continue
        if tok.startswith('"'):
            if res and res[-1][0] == "S":
                res[-1] = ("S", res[-1][1] + c_unescape(tok))
            else:
                res.append(("S", c_unescape(tok)))
        elif tok.startswith("/*"):
            res.append(("C", tok[2:-2].strip()))
        else:
            res.append(("T", tok))
    return res


def param_arrays(text):
    """name -> [parameter constants] of every `static const unsigned
    char NAME[] = { ... };` in the generated C."""
    res = {}
    for m in re.finditer(r"static const unsigned char (\w+)\[\] = \{([^}]*)\};", text):
        res[m.group(1)] = [p.strip() for p in m.group(2).split(",") if p.strip()]
    return res


def statements(c_text):
    """(row, field, n) -> SQL text or parameter list, for every string
    and parameter array of every row of sqle_dialects[], in order; the
    field is the comment the generator writes before it ('identity'
    before the first)."""
    start = c_text.index("const sqle_dialect sqle_dialects[] = {")
    end = c_text.index("\n};", start)
    params = param_arrays(c_text)
    out = {}
    depth = 0
    key = field = None
    count = {}
    for kind, tok in tokens(c_text[start:end]):
        if kind == "T" and tok == "{":
            depth += 1
            if depth == 2:
                key, field = None, "identity"
            continue
        if kind == "T" and tok == "}":
            depth -= 1
            continue
        if depth < 2:
            continue
        if kind == "C":
            field = tok
            continue
        if kind == "S" and key is None:
            key = tok
            continue
        if kind == "S" or (kind == "T" and tok in params):
            n = count.get((key, field), 0)
            count[(key, field)] = n + 1
            out[(key, field, n)] = tok if kind == "S" else "params: " + ", ".join(params[tok])
    return out


def generate(template, generator, outdir):
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([sys.executable, generator, template,
                        os.path.join(outdir, "dialects.c"), os.path.join(outdir, "dialects.h")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        return None
    res = {}
    for name in ("dialects.c", "dialects.h"):
        with open(os.path.join(outdir, name), encoding="utf-8") as f:
            res[name] = f.read()
    return res


def from_revision(rev, tmp):
    """Generate with REV's generator from REV's template."""
    paths = {}
    for rel in (TEMPLATE, GENERATOR):
        r = subprocess.run(["git", "-C", ROOT, "show", "%s:%s" % (rev, rel)], capture_output=True)
        if r.returncode != 0:
            sys.stderr.write("diff_generated: cannot read %s at %s: %s"
                             % (rel, rev, r.stderr.decode(errors="replace")))
            return None
        path = os.path.join(tmp, "rev", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(r.stdout)
        paths[rel] = path
    return generate(paths[TEMPLATE], paths[GENERATOR], os.path.join(tmp, "rev-out"))


def summary(stmts):
    per = {}
    for (key, field, _) in stmts:
        if field != "identity":
            per.setdefault(key, set()).add(field)
    return per


def main(argv):
    args = argv[1:]
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sqlease-diff-generated-") as tmp:
        new = generate(os.path.join(ROOT, TEMPLATE), os.path.join(ROOT, GENERATOR),
                       os.path.join(tmp, "new-out"))
        if new is None:
            return 2
        if args == ["--dump"]:
            for (key, field, n), text in statements(new["dialects.c"]).items():
                print("%s.%s[%d]: %s" % (key, field, n, text))
            return 0
        rev = args[0] if args else "HEAD"
        old = from_revision(rev, tmp)
        if old is None:
            return 2
    a, b = statements(old["dialects.c"]), statements(new["dialects.c"])
    for key, fields in sorted(summary(b).items()):
        print("%s: %d fields" % (key, len(fields)))
    if old == new:
        print("generated dialects.c and dialects.h: identical to %s's (%d statements and "
              "parameter lists compared)" % (rev, len(b)))
        return 0
    for name in ("dialects.h", "dialects.c"):
        if old[name] != new[name]:
            print("generated %s differs from %s's" % (name, rev))
    for k in sorted(set(a) | set(b), key=lambda k: (k[0] or "", k[1], k[2])):
        if a.get(k) != b.get(k):
            print("%s.%s[%d]:\n  %s: %s\n  work tree: %s" % (k[0], k[1], k[2], rev, a.get(k),
                                                              b.get(k)))
    sys.stdout.writelines(difflib.unified_diff(old["dialects.c"].splitlines(True),
                                               new["dialects.c"].splitlines(True),
                                               rev + "/dialects.c", "work-tree/dialects.c"))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
