#!/usr/bin/env python3
"""The code blocks of the README and docs/*.md, by name.

Every fenced block in those files is preceded by a marker line that says
who runs it, so that no command or program in the documents can rot
unnoticed:

    <!-- doctest: NAME -->                 tests/test_docs.py runs it
    <!-- doctest: NAME by ci/SCRIPT.sh --> that script runs it (and names it)
    <!-- doctest: NAME not run: REASON --> it cannot run here; REASON says why

tests/test_docs.py checks that every block has a marker, that names are
unique, and that every name it or a script claims is in the documents.
Scripts get a block's text with

    python3 tests/docblocks.py NAME        print the block NAME
    python3 tests/docblocks.py --list      every block: name, file:line, runner
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r'^\s*<!-- doctest: (?P<name>[a-z0-9][a-z0-9-]*)'
                    r'(?: (?:by (?P<by>\S+)|not run: (?P<why>.+?)))? -->\s*$')
FENCE = re.compile(r'^(?P<indent>\s*)(?P<fence>```+)(?P<lang>[^`\s]*)\s*$')


class Block:
    """One fenced block: its name, where it is, its language and text."""

    def __init__(self, name, path, line, lang, text, by, why):
        self.name, self.path, self.line = name, path, line
        self.lang, self.text, self.by, self.why = lang, text, by, why

    def where(self):
        return '%s:%d' % (os.path.relpath(self.path, ROOT), self.line)


def doc_files(root=ROOT):
    """The README and every docs/*.md, in a stable order."""
    files = [os.path.join(root, 'README.md')]
    d = os.path.join(root, 'docs')
    if os.path.isdir(d):
        files += sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith('.md'))
    return files


def parse(path):
    """(blocks, problems) of one file.  A block's marker must be the last
    non-blank line before its opening fence; a block without one, or a
    marker with no block after it, is a problem."""
    blocks, problems = [], []
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    pending = None          # (marker match, line number) awaiting its fence
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m:
            if pending:
                problems.append('%s:%d: marker without a block' % (path, pending[1]))
            pending = (m, i + 1)
            i += 1
            continue
        f = FENCE.match(lines[i])
        if not f:
            if lines[i].strip() and pending:
                problems.append('%s:%d: marker without a block' % (path, pending[1]))
                pending = None
            i += 1
            continue
        start, indent, fence = i + 1, f.group('indent'), f.group('fence')
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        if pending is None:
            problems.append('%s:%d: block without a doctest marker' % (path, start))
            continue
        m = pending[0]
        blocks.append(Block(m.group('name'), path, start, f.group('lang'),
                            '\n'.join(body) + '\n', m.group('by'), m.group('why')))
        pending = None
    if pending:
        problems.append('%s:%d: marker without a block' % (path, pending[1]))
    return blocks, problems


def all_blocks(root=ROOT):
    """(blocks by name, problems) over every document."""
    by_name, problems = {}, []
    for path in doc_files(root):
        blocks, p = parse(path)
        problems += p
        for b in blocks:
            if b.name in by_name:
                problems.append('%s: block name %r already used at %s'
                                % (b.where(), b.name, by_name[b.name].where()))
            else:
                by_name[b.name] = b
    return by_name, problems


def main(argv):
    blocks, problems = all_blocks()
    if len(argv) == 2 and argv[1] == '--list':
        for b in blocks.values():
            runner = b.by or ('not run: ' + b.why if b.why else 'tests/test_docs.py')
            print('%-28s %-32s %s' % (b.name, b.where(), runner))
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    if len(argv) != 2 or argv[1] not in blocks:
        print('usage: docblocks.py NAME | --list (no block %r)' % (argv[1:] or [''])[0],
              file=sys.stderr)
        return 2
    sys.stdout.write(blocks[argv[1]].text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
