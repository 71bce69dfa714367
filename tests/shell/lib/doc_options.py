"""The options a command's page documents (Documentation/xpu-*.md): every
-X and --NAME in the term of a definition (a line starting with a backtick
followed by a line starting with ': ', pandoc's definition lists) or in the
first cell of a table row starting with a backticked option.

  python3 doc_options.py PAGE   one option per line, sorted"""
import re
import sys


def options(text):
    lines = text.split('\n')
    out = set()

    def take(s):
        for t in re.findall(r'`([^`]*)`', s):
            for m in re.finditer(r'(?:^|[\s,])(--?[a-zA-Z][a-zA-Z0-9-]*)', t):
                out.add(m.group(1))
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if line.startswith('`') and nxt.startswith(': '):
            take(line)
        elif line.startswith('| `-'):
            take(line.split('|')[1])
    return sorted(out)


if __name__ == '__main__':
    with open(sys.argv[1], encoding='utf-8') as f:
        print('\n'.join(options(f.read())))
