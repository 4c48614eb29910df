#!/usr/bin/env python3
"""Records each edit case's oracle output: the shared app (`_app/`, or the
case's own `app/`) with the case's hand-edited `after.yaml` in place of the
kustomization file the commands edit, built by `kubectl kustomize` (Kustomize
v5.5.0). Writes `expected.yaml`; a case with `expected_error.txt` is skipped.
A case with an `original` file records the build of the app as it is, without
`after.yaml` (for `edit fix`, whose build must not change).

Usage: make-expected.py [--cases DIR] [CASE...]   (default: every case of
this folder; `--cases ../argocd` for the Argo CD scenarios, which build the
shared app here)
"""
import os
import shutil
import subprocess
import sys
import tempfile

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_app")
HERE = os.path.dirname(os.path.abspath(__file__))
if sys.argv[1:2] == ["--cases"]:
    HERE = os.path.abspath(sys.argv[2])
    del sys.argv[1:3]


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        return default


def record(case):
    cdir = os.path.join(HERE, case)
    if os.path.exists(os.path.join(cdir, "expected_error.txt")):
        return
    app = os.path.join(cdir, "app")
    if not os.path.isdir(app):
        app = APP
    workdir = read(os.path.join(cdir, "dir"), "overlays/prod")
    build = read(os.path.join(cdir, "build"), workdir)
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "tree")
        shutil.copytree(app, tree)
        if not os.path.exists(os.path.join(cdir, "original")):
            shutil.copy(os.path.join(cdir, "after.yaml"),
                        os.path.join(tree, workdir, "kustomization.yaml"))
        out = subprocess.run(["kubectl", "kustomize", os.path.join(tree, build)],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{case}: kubectl failed:\n{out.stderr}")
        with open(os.path.join(cdir, "expected.yaml"), "w") as f:
            f.write(out.stdout)


cases = sys.argv[1:] or sorted(
    d for d in os.listdir(HERE)
    if not d.startswith("_") and os.path.isdir(os.path.join(HERE, d)))
for c in cases:
    record(c)
