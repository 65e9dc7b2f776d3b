"""Applies one variant of an edits file (JSON: {variant: [{file, old, new}, ...]}) to the tree at TREE, in place: each
edit's old text must occur exactly once in its file (else the files changed since the edits were made against them,
and this stops rather than guess). The device calls' A/B comparisons of kernel text write a variant into a copy of the
tree with it (bench/results/*/edits.json). Usage: python3 bench/apply-edits.py EDITS VARIANT TREE [--reverse]
(--reverse undoes VARIANT: each edit's new text back to its old, e.g. the shaders before a variant shipped)."""
import json, pathlib, sys

USAGE = 'usage: python3 bench/apply-edits.py EDITS VARIANT TREE [--reverse]'
if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ['--reverse']):
    sys.exit(USAGE)
edits, variant, tree = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
reverse = sys.argv[4:] == ['--reverse']
variants = json.loads(edits.read_text(encoding='utf-8'))
if variant not in variants:
    sys.exit(f"{edits} has no variant {variant!r} (it has {', '.join(variants)}); {USAGE}")
for e in variants[variant]:
    old, new = (e['new'], e['old']) if reverse else (e['old'], e['new'])
    p = tree / e['file']
    text = p.read_text(encoding='utf-8')
    n = text.count(old)
    if n != 1:
        sys.exit(f"{p}: an edit's old text occurs {n} times, not once (the files changed): make {edits} again")
    p.write_text(text.replace(old, new), encoding='utf-8')
