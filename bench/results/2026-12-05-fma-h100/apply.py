"""Applies one variant of edits.json (new or fmaall) to the shaders of the tree at TREE, in place (bench/apply-edits.py,
which holds what this file held when the call ran). Usage: python3 apply.py VARIANT TREE [--reverse]"""
import pathlib, subprocess, sys

here = pathlib.Path(__file__).parent
sys.exit(subprocess.call([sys.executable, str(here.parents[2] / 'bench' / 'apply-edits.py'), str(here / 'edits.json'), *sys.argv[1:]]))
