"""Applies one variant of edits.json (new or fmaall) to the shaders of the tree at TREE, in place:
each edit's old text must occur exactly once in its file (else the shaders changed since the edits were
made against them, and this stops rather than guess). Usage: python3 apply.py VARIANT TREE [--reverse]
(--reverse undoes VARIANT: each edit's new text back to its old, e.g. the shaders before "new" shipped)."""
import json, pathlib, sys

variant, tree = sys.argv[1], pathlib.Path(sys.argv[2])
reverse = sys.argv[3:] == ['--reverse']
for e in json.loads((pathlib.Path(__file__).parent / 'edits.json').read_text(encoding='utf-8'))[variant]:
    old, new = (e['new'], e['old']) if reverse else (e['old'], e['new'])
    p = tree / e['file']
    text = p.read_text(encoding='utf-8')
    n = text.count(old)
    if n != 1:
        sys.exit(f"{p}: an edit's old text occurs {n} times, not once (the shaders changed): make edits.json again")
    p.write_text(text.replace(old, new), encoding='utf-8')
