#!/bin/sh
# Writes each case's expected.yaml from the oracle: `kubectl kustomize`
# (Kustomize v5.5.0) on the case's kustomization.yaml, which gives the
# CRD's schema as an `openapi: path:` document (kustomize's `crds:` field
# does not give strategic merge its keys). Run from this directory.
set -eu
for case in */; do
  case=${case%/}
  kubectl kustomize "$case" > "$case/expected.yaml"
  echo "$case"
done
