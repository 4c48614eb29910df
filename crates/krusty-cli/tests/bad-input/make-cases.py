#!/usr/bin/env python3
"""Writes the bad-input corpus: one folder per case with `in/`, a
kustomization tree that is wrong in one way (or, for a few, a tricky tree
Kustomize accepts).

    make-cases.py            (re)write every case's in/ (keeps the snapshots)
    make-cases.py --oracle   also run `kubectl kustomize` on each case and
                             write kubectl_exit (0 accepted, 1 refused)
    make-cases.py [--oracle] NAME...   only the cases named

Then `KRUSTY_BLESS=1 cargo test -p krusty-cli --test bad_input` writes
expected_error.txt (a refused tree) or expected_stderr.txt. A case whose krusty decision differs from
kubectl's gets a `disagreement` file (one line) by hand."""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"
DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
"""
K_DEPLOY = "resources:\n- deploy.yaml\n"

CASES = {}


def case(name, files):
    assert name not in CASES, name
    CASES[name] = files


def kust(name, text, extra=None):
    """A case whose kustomization.yaml is `text`, beside deploy.yaml and cm.yaml."""
    files = {"kustomization.yaml": text, "deploy.yaml": DEPLOY, "cm.yaml": CM}
    files.update(extra or {})
    case(name, files)


def resource(name, text):
    """A case whose only resource file, r.yaml, is `text`."""
    case(name, {"kustomization.yaml": "resources:\n- r.yaml\n", "r.yaml": text})


def patch(name, text, entry="patches:\n- path: p.yaml\n"):
    """A case patching deploy.yaml with p.yaml (`entry` says how)."""
    kust(name, K_DEPLOY + entry, {"p.yaml": text})


# --- malformed YAML: kustomization file -------------------------------------
kust("yaml-kustomization-tab-indent", "resources:\n\t- deploy.yaml\n")
kust("yaml-kustomization-tab-after-key", "namePrefix:\tx-\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-bad-indent", "resources:\n  - deploy.yaml\n - cm.yaml\n")
kust("yaml-kustomization-bad-indent-mapping", "namespace: a\n  namePrefix: b\n")
kust("yaml-kustomization-unclosed-double-quote", 'namePrefix: "x-\nresources:\n- deploy.yaml\n')
kust("yaml-kustomization-unclosed-single-quote", "namePrefix: 'x-\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-unclosed-flow-seq", "resources: [deploy.yaml, cm.yaml\n")
kust("yaml-kustomization-unclosed-flow-map", "commonLabels: {app: web\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-flow-extra-close", "resources: [deploy.yaml]]\n")
kust("yaml-kustomization-duplicate-key", "namePrefix: a-\nnamePrefix: b-\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-duplicate-key-resources", "resources:\n- deploy.yaml\nresources:\n- cm.yaml\n")
kust("yaml-kustomization-undefined-alias", "resources: *nope\n")
kust("yaml-kustomization-alias-ok", "resources: &r\n- deploy.yaml\nx: *r\n")
kust("yaml-kustomization-anchor-alias-resources", "a: &r deploy.yaml\nresources:\n- *r\n")
kust("yaml-kustomization-merge-key", "base: &b\n  namePrefix: x-\n<<: *b\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-bad-int-tag", "resources:\n- deploy.yaml\nnamePrefix: !!int abc\n")
kust("yaml-kustomization-unknown-tag", "resources:\n- !foo deploy.yaml\n")
kust("yaml-kustomization-str-tag-on-seq", "resources: !!str\n- deploy.yaml\n")
kust("yaml-kustomization-yaml-directive", "%YAML 1.1\n---\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-bad-yaml-directive", "%YAML 2.0\n---\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-directive-without-start", "%YAML 1.1\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-huge-key", "x" * 2000 + ": 1\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-huge-implicit-key-value", "resources:\n- " + "d" * 5000 + ".yaml\n")
kust("yaml-kustomization-control-char", "namePrefix: a\x01b\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-nul-byte", "namePrefix: a\x00b\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-invalid-utf8", b"namePrefix: a\xff\xfeb\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-utf8-bom", b"\xef\xbb\xbfresources:\n- deploy.yaml\n")
kust("yaml-kustomization-utf16-bom", "\ufeffresources:\n- deploy.yaml\n".encode("utf-16-le"))
kust("yaml-kustomization-bom-mid-file", "resources:\n- deploy.yaml\n\ufeffnamePrefix: x-\n")
kust("yaml-kustomization-empty", "")
kust("yaml-kustomization-only-comments", "# nothing here\n# at all\n")
kust("yaml-kustomization-only-document-marker", "---\n")
kust("yaml-kustomization-top-level-list", "- deploy.yaml\n- cm.yaml\n")
kust("yaml-kustomization-top-level-scalar", "deploy.yaml\n")
kust("yaml-kustomization-two-documents", "resources:\n- deploy.yaml\n---\nresources:\n- cm.yaml\n")
kust("yaml-kustomization-key-without-colon", "resources\n- deploy.yaml\n")
kust("yaml-kustomization-block-scalar-bad-indicator", "namePrefix: |x\n  a-\n")
kust("yaml-kustomization-mapping-in-plain", "namePrefix: a: b\n")
kust("yaml-kustomization-lone-cr", "resources:\r- deploy.yaml\r")
kust("yaml-kustomization-crlf", "resources:\r\n- deploy.yaml\r\n")
kust("yaml-kustomization-deep-nesting", "x: " + "[" * 300 + "]" * 300 + "\nresources:\n- deploy.yaml\n")
kust("yaml-kustomization-billion-laughs",
     "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
     + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]\n" for i in range(1, 9))
     + "resources:\n- deploy.yaml\n")

# --- malformed YAML: resource files -----------------------------------------
resource("yaml-resource-tab-indent", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: cm\n")
resource("yaml-resource-bad-indent", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n labels: {}\n")
resource("yaml-resource-unclosed-quote", 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "cm\n')
resource("yaml-resource-unclosed-flow", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm\n")
resource("yaml-resource-duplicate-key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  name: cm2\n")
resource("yaml-resource-duplicate-top-key", "apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata:\n  name: cm\n")
resource("yaml-resource-undefined-alias", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: *n\n")
resource("yaml-resource-anchor-alias-ok", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n cm\ndata:\n  a: *n\n")
resource("yaml-resource-alias-as-key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n cm\ndata:\n  *n : x\n")
resource("yaml-resource-bad-float-tag", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: !!float x\n")
resource("yaml-resource-binary-tag", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: !!binary aGVsbG8=\n")
resource("yaml-resource-custom-tag", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: !custom x\n")
resource("yaml-resource-control-char", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: x\x07y\n")
resource("yaml-resource-invalid-utf8", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \xc3\x28\n")
resource("yaml-resource-utf8-bom", b"\xef\xbb\xbfapiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
resource("yaml-resource-empty", "")
resource("yaml-resource-only-separators", "---\n---\n")
resource("yaml-resource-scalar-document", "hello\n")
resource("yaml-resource-list-document", "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm\n")
resource("yaml-resource-missing-kind", "apiVersion: v1\nmetadata:\n  name: cm\n")
resource("yaml-resource-missing-name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
resource("yaml-resource-missing-metadata", "apiVersion: v1\nkind: ConfigMap\n")
resource("yaml-resource-kind-is-list", "apiVersion: v1\nkind: [ConfigMap]\nmetadata:\n  name: cm\n")
resource("yaml-resource-name-is-map", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {a: b}\n")
resource("yaml-resource-metadata-is-list", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n- name: cm\n")
resource("yaml-resource-labels-not-strings", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n    a: [1]\n")
resource("yaml-resource-null-key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  ~: x\n")
resource("yaml-resource-nan-value", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: .nan\n")
resource("yaml-resource-int-key-nested", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  1: x\n")
resource("yaml-resource-list-items-kind", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n- 7\n")
resource("yaml-resource-duplicate-ids", CM + "---\n" + CM)
resource("yaml-resource-document-end-marker", CM + "...\n" + "garbage: [\n")
resource("yaml-resource-unterminated-block-scalar-indent", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: |2-\n x\n")

# --- YAML edge cases (several found by the fuzz targets) ---------------------
THING = "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\n"
resource("yaml-edge-flow-plain-starts-with-pipe", THING + "spec: {big: |+1234}\n")
resource("yaml-edge-flow-seq-block-entry", THING + "spec:\n  args: [a, - name: b]\n")
resource("yaml-edge-flow-map-dash-key", THING + "spec: {name: c,- other: d}\n")
resource("yaml-edge-flow-seq-lone-dash", THING + "spec:\n  l: [a, b, -]\n")
resource("yaml-edge-unclosed-verbatim-tag", THING + "spec:\n  k: !<<x\n  j: y\n")
resource("yaml-edge-verbatim-tag", THING + "spec:\n  k: !<tag:yaml.org,2002:str> x\n")
resource("yaml-edge-plain-starts-with-percent", THING + "spec:\n  k: %x\n")
resource("yaml-edge-plain-starts-with-at", THING + "spec:\n  k: @x\n")
resource("yaml-edge-plain-starts-with-backtick", THING + "spec:\n  k: `x\n")
resource("yaml-edge-indented-percent-line", "# c\n %YAML 1.2d patches\n")
resource("yaml-edge-long-explicit-key-compact-map", THING + "spec:\n  ? " + "k" * 130 + "\n  : name: x\n")
resource("yaml-edge-explicit-key-compact-seq", THING + "spec:\n  ? a\n  : - x\n    - y\n")
resource("yaml-edge-implicit-key-too-long", THING + "spec:\n  " + "k" * 1100 + ": x\n")
resource("yaml-edge-tab-in-flow", THING + "spec: {a:\t1,\tb: 2}\n")
resource("yaml-edge-tab-before-comment", THING + "spec:\n  a: 1\t# c\n")
resource("yaml-edge-tab-indented-block-scalar", THING + "spec:\n  a: |\n  \tx\n")
resource("yaml-edge-anchor-redefined", THING + "spec:\n  a: &x 1\n  b: &x 2\n  c: *x\n")
resource("yaml-edge-alias-before-anchor", THING + "spec:\n  c: *x\n  a: &x 1\n")
resource("yaml-edge-anchor-on-alias", THING + "spec:\n  a: &x 1\n  b: &y *x\n")
resource("yaml-edge-merge-key-scalar", THING + "spec:\n  <<: 1\n  a: 2\n")
resource("yaml-edge-flow-pair-merge-key-scalar", THING + "spec: [<<: \"c.local\"]\n")
resource("yaml-edge-flow-map-dash-at-column-0", THING + "o:  {spec:\n-,:ath: a}\n")
resource("yaml-edge-flow-hash-scalar", THING + "spec: {#: x}\n")
resource("yaml-edge-merge-key-list-of-maps", THING + "base: &b {x: 1}\nspec:\n  <<: [*b, {y: 2}]\n")
resource("yaml-edge-undeclared-tag-handle", THING + "spec:\n  a: !e!x 1\n")
resource("yaml-edge-block-scalar-leading-spaces", THING + "spec:\n  k: |\n\n     |  \n      \n     \n  j: y\n")
resource("yaml-edge-block-scalar-less-indented", THING + "spec:\n  k: |\n      a\n    b\n")
resource("yaml-edge-utf16-be-bom", ("\ufeff" + THING).encode("utf-16-be"))
resource("yaml-edge-bom-key-mid-file", ("\n\ufeff" + THING).encode())
resource("yaml-edge-u2028-in-plain", THING + "spec:\n  a: x\u2028y\n")
resource("yaml-edge-nel-in-double-quoted", THING + "spec:\n  a: \"x\\Ny\"\n")
resource("yaml-edge-trailing-after-quote", THING + "spec:\n  a: \"x\" y\n")
resource("yaml-edge-colon-in-flow-key", THING + "spec: {a:b: c}\n")
resource("yaml-edge-comment-without-space", THING + "spec:\n  a: b#c\n")
resource("yaml-edge-question-plain", THING + "spec:\n  a: ?x\n")
resource("yaml-edge-quoted-key-multiline", THING + "spec:\n  \"a\n  b\": 1\n")
resource("yaml-edge-flow-multiline-implicit-key", THING + "spec: {a\n  : 1}\n")
resource("yaml-edge-bad-escape", THING + "spec:\n  a: \"\\q\"\n")
resource("yaml-edge-bad-unicode-escape", THING + "spec:\n  a: \"\\uD800\"\n")
resource("yaml-edge-empty-flow-entry", THING + "spec: [a, , b]\n")
resource("yaml-edge-document-start-mid-line", THING + "spec: --- x\n")
resource("yaml-edge-reserved-directive", "%FOO bar\n---\n" + THING)
resource("yaml-edge-tag-directive", "%TAG !e! tag:example.com,2000:\n---\n" + THING + "spec: !e!x 1\n")

# --- malformed YAML: patch files ---------------------------------------------
patch("yaml-patch-tab-indent", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n\tname: web\n")
patch("yaml-patch-unclosed-flow", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web\n")
patch("yaml-patch-invalid-utf8", b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    x: \xff\n")
patch("yaml-patch-empty-file", "")
patch("yaml-patch-duplicate-key", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  replicas: 3\n")
patch("yaml-patch-undefined-alias", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: *r\n")

# --- kustomization fields and types ------------------------------------------
kust("field-unknown", "resources:\n- deploy.yaml\nnamePrefixx: a-\n")
kust("field-unknown-case-insensitive-match", "Resources:\n- deploy.yaml\nNAMEPREFIX: a-\n")
kust("field-resources-is-string", "resources: deploy.yaml\n")
kust("field-resources-is-map", "resources:\n  a: deploy.yaml\n")
kust("field-resources-entry-is-map", "resources:\n- path: deploy.yaml\n")
kust("field-resources-entry-is-int", "resources:\n- 7\n")
kust("field-resources-entry-empty", "resources:\n- ''\n")
kust("field-resources-entry-null", "resources:\n- ~\n")
kust("field-name-prefix-is-list", "namePrefix: [a]\nresources:\n- deploy.yaml\n")
kust("field-name-prefix-is-int", "namePrefix: 7\nresources:\n- deploy.yaml\n")
kust("field-namespace-is-map", "namespace: {a: b}\nresources:\n- deploy.yaml\n")
kust("field-namespace-invalid-chars", "namespace: Not_Valid!\nresources:\n- deploy.yaml\n")
kust("field-common-labels-is-list", "commonLabels:\n- app\nresources:\n- deploy.yaml\n")
kust("field-common-labels-value-is-map", "commonLabels:\n  app: {a: b}\nresources:\n- deploy.yaml\n")
kust("field-common-labels-value-is-int", "commonLabels:\n  tier: 7\nresources:\n- deploy.yaml\n")
kust("field-common-annotations-value-is-list", "commonAnnotations:\n  a: [x]\nresources:\n- deploy.yaml\n")
kust("field-labels-is-map", "labels:\n  pairs:\n    a: b\nresources:\n- deploy.yaml\n")
kust("field-labels-pairs-is-list", "labels:\n- pairs: [a]\nresources:\n- deploy.yaml\n")
kust("field-labels-unknown-subfield", "labels:\n- pairs: {a: b}\n  includeSelector: true\n  extra: 1\nresources:\n- deploy.yaml\n")
kust("field-labels-include-selectors-is-string", "labels:\n- pairs: {a: b}\n  includeSelectors: maybe\nresources:\n- deploy.yaml\n")
kust("field-api-version-wrong", "apiVersion: kustomize.config.k8s.io/v2\nkind: Kustomization\nresources:\n- deploy.yaml\n")
kust("field-api-version-is-list", "apiVersion: [a]\nresources:\n- deploy.yaml\n")
kust("field-kind-wrong", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Deployment\nresources:\n- deploy.yaml\n")
kust("field-kind-component-at-top", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n- deploy.yaml\n")
kust("field-bases-deprecated", "bases:\n- base\n", {"base/kustomization.yaml": K_DEPLOY, "base/deploy.yaml": DEPLOY})
kust("field-patches-strategic-merge-is-string", K_DEPLOY + "patchesStrategicMerge: p.yaml\n")
kust("field-patches-json6902-missing-target", K_DEPLOY + "patchesJson6902:\n- path: p.yaml\n", {"p.yaml": "- op: add\n  path: /x\n  value: 1\n"})
kust("field-patches-is-map", K_DEPLOY + "patches:\n  path: p.yaml\n", {"p.yaml": "kind: Deployment\n"})
kust("field-patches-entry-empty", K_DEPLOY + "patches:\n- {}\n")
kust("field-patches-both-path-and-patch", K_DEPLOY + "patches:\n- path: p.yaml\n  patch: |-\n    kind: Deployment\n", {"p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"})
kust("field-openapi-path-missing", K_DEPLOY + "openapi:\n  path: nope.json\n")
kust("field-openapi-bad-version", K_DEPLOY + "openapi:\n  version: v0.0.1\n")
kust("field-sort-options-bad-order", K_DEPLOY + "sortOptions:\n  order: random\n")
kust("field-sort-options-legacy-with-fifo", K_DEPLOY + "sortOptions:\n  order: fifo\n  legacySortOptions:\n    orderFirst: [Namespace]\n")
kust("field-build-metadata-unknown", K_DEPLOY + "buildMetadata: [originAnnotations, colors]\n")
kust("field-generator-options-is-list", K_DEPLOY + "generatorOptions:\n- disableNameSuffixHash: true\n")
kust("field-generator-options-bool-is-string", K_DEPLOY + "generatorOptions:\n  disableNameSuffixHash: sure\n")
kust("field-crds-missing-file", K_DEPLOY + "crds:\n- crd.json\n")
kust("field-configurations-missing-file", K_DEPLOY + "configurations:\n- conf.yaml\n")
kust("field-configurations-bad-content", K_DEPLOY + "configurations:\n- conf.yaml\n", {"conf.yaml": "nameReference: 7\n"})
kust("field-helm-charts-without-flag", "helmCharts:\n- name: x\n  repo: https://example.invalid\n")
kust("field-name-suffix-is-map", "nameSuffix: {a: b}\nresources:\n- deploy.yaml\n")
kust("field-vars-is-map", K_DEPLOY + "vars:\n  name: x\n")
kust("field-images-is-map", K_DEPLOY + "images:\n  name: nginx\n")

# --- kustomization field types, as Go's JSON decoding checks them --------------
kust("type-kind-is-list", "kind: [Kustomization]\nresources:\n- deploy.yaml\n")
kust("type-kind-is-bool", "kind: true\nresources:\n- deploy.yaml\n")
kust("type-api-version-is-int", "apiVersion: 7\nresources:\n- deploy.yaml\n")
kust("type-metadata-is-list", "metadata: [a]\nresources:\n- deploy.yaml\n")
kust("type-metadata-name-is-list", "metadata:\n  name: [a]\nresources:\n- deploy.yaml\n")
kust("type-namespace-is-int", "namespace: 7\nresources:\n- deploy.yaml\n")
kust("type-namespace-is-bool", "namespace: yes\nresources:\n- deploy.yaml\n")
kust("type-name-prefix-is-null", "namePrefix: ~\nresources:\n- deploy.yaml\n")
kust("type-resources-nested-list", "resources:\n- [deploy.yaml]\n")
kust("type-resources-null", "resources: ~\n")
kust("type-common-labels-null", "commonLabels: ~\nresources:\n- deploy.yaml\n")
kust("type-common-labels-key-is-int", "commonLabels:\n  7: a\nresources:\n- deploy.yaml\n")
kust("type-common-labels-value-is-bool", "commonLabels:\n  a: true\nresources:\n- deploy.yaml\n")
kust("type-common-labels-value-is-null", "commonLabels:\n  a: ~\nresources:\n- deploy.yaml\n")
kust("type-labels-pairs-null", "labels:\n- pairs: ~\nresources:\n- deploy.yaml\n")
kust("type-labels-entry-is-string", "labels:\n- a=b\nresources:\n- deploy.yaml\n")
kust("type-openapi-is-list", K_DEPLOY + "openapi: [a]\n")
kust("type-build-metadata-is-string", K_DEPLOY + "buildMetadata: originAnnotations\n")
kust("type-sort-options-is-list", K_DEPLOY + "sortOptions: [fifo]\n")
kust("type-patch-target-is-string", K_DEPLOY + "patches:\n- path: p.yaml\n  target: Deployment\n", {"p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"})
kust("type-patch-options-is-list", K_DEPLOY + "patches:\n- path: p.yaml\n  options: [allowNameChange]\n", {"p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"})
kust("type-patch-path-is-int", K_DEPLOY + "patches:\n- path: 7\n")
kust("type-psm-entry-is-map", K_DEPLOY + "patchesStrategicMerge:\n- {a: b}\n")
kust("type-generator-options-labels-is-list", K_DEPLOY + "generatorOptions:\n  labels: [a]\n")
kust("type-generator-disable-hash-is-string", "configMapGenerator:\n- name: c\n  literals: [a=1]\n  options:\n    disableNameSuffixHash: 'true'\n")
kust("type-generator-name-is-int", "configMapGenerator:\n- name: 7\n  literals: [a=1]\n")
kust("type-generator-literals-int", "configMapGenerator:\n- name: c\n  literals: [7]\n")
kust("type-helm-globals-is-list", K_DEPLOY + "helmGlobals: [a]\n")
kust("type-crds-is-string", K_DEPLOY + "crds: crd.yaml\n")
kust("type-vars-name-is-int", K_DEPLOY + "vars:\n- name: 7\n  objref: {kind: Deployment, name: web, apiVersion: apps/v1}\n")
kust("type-replacements-is-string", K_DEPLOY + "replacements: r.yaml\n")
kust("type-components-entry-is-int", K_DEPLOY + "components:\n- 7\n")
kust("type-replicas-count-is-quoted", K_DEPLOY + "replicas:\n- name: web\n  count: '3'\n")
kust("type-images-new-tag-null", K_DEPLOY + "images:\n- name: nginx\n  newTag: ~\n")
kust("type-images-name-is-int", K_DEPLOY + "images:\n- name: 7\n  newTag: '2'\n")
kust("type-transformers-is-string", K_DEPLOY + "transformers: t.yaml\n")
kust("type-name-suffix-is-float", "nameSuffix: 1.5\nresources:\n- deploy.yaml\n")
kust("type-common-annotations-is-string", "commonAnnotations: a=b\nresources:\n- deploy.yaml\n")
kust("type-unknown-field-nested-in-replica", K_DEPLOY + "replicas:\n- name: web\n  count: 2\n  extra: 1\n")
kust("type-unknown-field-nested-in-generator-options", K_DEPLOY + "generatorOptions:\n  disableHash: true\n")

# --- images and replicas -----------------------------------------------------
kust("images-entry-without-name", K_DEPLOY + "images:\n- newTag: '2'\n")
kust("images-entry-is-string", K_DEPLOY + "images:\n- nginx:2\n")
kust("images-new-tag-is-int", K_DEPLOY + "images:\n- name: nginx\n  newTag: 2\n")
kust("images-new-tag-is-list", K_DEPLOY + "images:\n- name: nginx\n  newTag: [2]\n")
kust("images-unknown-field", K_DEPLOY + "images:\n- name: nginx\n  tag: '2'\n")
kust("images-invalid-new-name", K_DEPLOY + "images:\n- name: nginx\n  newName: 'UPPER CASE:bad'\n")
kust("images-digest-and-tag", K_DEPLOY + "images:\n- name: nginx\n  newTag: '2'\n  digest: sha256:abc\n")
kust("images-tag-suffix-field", K_DEPLOY + "images:\n- name: nginx\n  tagSuffix: -x\n")
kust("replicas-count-is-string", K_DEPLOY + "replicas:\n- name: web\n  count: three\n")
kust("replicas-count-is-float", K_DEPLOY + "replicas:\n- name: web\n  count: 2.5\n")
kust("replicas-count-negative", K_DEPLOY + "replicas:\n- name: web\n  count: -1\n")
kust("replicas-count-overflow", K_DEPLOY + "replicas:\n- name: web\n  count: 99999999999999999999\n")
kust("replicas-without-name", K_DEPLOY + "replicas:\n- count: 2\n")
kust("replicas-is-map", K_DEPLOY + "replicas:\n  web: 2\n")
kust("replicas-target-missing", K_DEPLOY + "replicas:\n- name: nothere\n  count: 2\n")

# --- missing files and directories ---------------------------------------------
kust("missing-resource-file", "resources:\n- nope.yaml\n")
kust("missing-resource-dir", "resources:\n- nope/\n")
kust("missing-patch-file", K_DEPLOY + "patches:\n- path: nope.yaml\n")
kust("missing-psm-file", K_DEPLOY + "patchesStrategicMerge:\n- nope.yaml\n")
kust("missing-json6902-file", K_DEPLOY + "patchesJson6902:\n- target: {group: apps, version: v1, kind: Deployment, name: web}\n  path: nope.yaml\n")
kust("missing-configmap-file-source", "configMapGenerator:\n- name: c\n  files:\n  - nope.txt\n")
kust("missing-configmap-env-file", "configMapGenerator:\n- name: c\n  envs:\n  - nope.env\n")
kust("missing-secret-file-source", "secretGenerator:\n- name: s\n  files:\n  - nope.txt\n")
kust("missing-component", K_DEPLOY + "components:\n- nope\n")
kust("missing-replacement-file", K_DEPLOY + "replacements:\n- path: nope.yaml\n")
kust("missing-transformer-file", K_DEPLOY + "transformers:\n- nope.yaml\n")
kust("missing-generator-file", K_DEPLOY + "generators:\n- nope.yaml\n")
case("dir-without-kustomization", {"deploy.yaml": DEPLOY})
case("dir-empty", {".keep": ""})
case("dir-resource-without-kustomization", {"kustomization.yaml": "resources:\n- sub\n", "sub/deploy.yaml": DEPLOY})
case("dir-two-kustomization-files", {"kustomization.yaml": K_DEPLOY, "kustomization.yml": K_DEPLOY, "deploy.yaml": DEPLOY})
case("dir-kustomization-is-directory", {"kustomization.yaml/x.yaml": K_DEPLOY, "deploy.yaml": DEPLOY})
case("dir-capital-kustomization-name", {"Kustomization": K_DEPLOY, "deploy.yaml": DEPLOY})
case("path-outside-root", {"kustomization.yaml": "resources:\n- ../outside.yaml\n"})
case("path-absolute", {"kustomization.yaml": "resources:\n- /etc/passwd\n"})
case("path-patch-outside-root", {"kustomization.yaml": K_DEPLOY + "patches:\n- path: ../p.yaml\n", "deploy.yaml": DEPLOY})
case("path-configmap-file-outside-root", {"kustomization.yaml": "configMapGenerator:\n- name: c\n  files:\n  - ../../make-cases.py\n"})

# --- cycles ----------------------------------------------------------------------
case("cycle-self", {"kustomization.yaml": "resources:\n- .\n"})
case("cycle-two-dirs", {"kustomization.yaml": "resources:\n- a\n", "a/kustomization.yaml": "resources:\n- ../b\n", "b/kustomization.yaml": "resources:\n- ../a\n"})
case("cycle-parent", {"kustomization.yaml": "resources:\n- sub\n", "sub/kustomization.yaml": "resources:\n- ..\n"})
case("cycle-component-self", {"kustomization.yaml": K_DEPLOY + "components:\n- comp\n", "deploy.yaml": DEPLOY, "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncomponents:\n- .\n"})
case("duplicate-base-twice", {"kustomization.yaml": "resources:\n- base\n- base\n", "base/kustomization.yaml": K_DEPLOY, "base/deploy.yaml": DEPLOY})
case("duplicate-resource-file-twice", {"kustomization.yaml": "resources:\n- deploy.yaml\n- deploy.yaml\n", "deploy.yaml": DEPLOY})

# --- strategic merge patches ---------------------------------------------------------
patch("smp-no-match", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\nspec:\n  replicas: 3\n")
patch("smp-missing-kind", "apiVersion: apps/v1\nmetadata:\n  name: web\nspec:\n  replicas: 3\n")
patch("smp-missing-name", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n")
patch("smp-is-list", "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n")
patch("smp-is-scalar", "hello\n")
patch("smp-unknown-directive", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  $patch: explode\n")
patch("smp-delete-directive-in-list", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        $patch: delete\n")
patch("smp-type-mismatch-map-for-list", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        name: web\n")
patch("smp-type-mismatch-list-for-map", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n  - a\n")
patch("smp-containers-without-name", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - image: x\n")
patch("smp-psm-no-match", "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n", "patchesStrategicMerge:\n- p.yaml\n")
patch("smp-target-bad-regex", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n", "patches:\n- path: p.yaml\n  target:\n    name: 'web[('\n")
patch("smp-target-unknown-field", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n", "patches:\n- path: p.yaml\n  target:\n    kind: Deployment\n    colour: red\n")
patch("smp-options-unknown", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n", "patches:\n- path: p.yaml\n  options:\n    allowNameChange: true\n    allowEverything: true\n")
patch("smp-name-change-not-allowed", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web2\n", "patches:\n- path: p.yaml\n  target:\n    kind: Deployment\n")
patch("smp-inline-bad-yaml", "", "patches:\n- patch: |-\n    kind: Deployment\n    metadata: {name: web\n")

# --- JSON 6902 patches --------------------------------------------------------------------
J6902 = "patches:\n- path: p.yaml\n  target:\n    kind: Deployment\n    name: web\n"
patch("json6902-missing-op", "- path: /spec/replicas\n  value: 2\n", J6902)
patch("json6902-unknown-op", "- op: frobnicate\n  path: /spec/replicas\n  value: 2\n", J6902)
patch("json6902-op-is-int", "- op: 7\n  path: /spec/replicas\n", J6902)
patch("json6902-missing-path", "- op: add\n  value: 2\n", J6902)
patch("json6902-path-without-slash", "- op: add\n  path: spec/replicas\n  value: 2\n", J6902)
patch("json6902-path-bad-escape", "- op: add\n  path: /metadata/labels/a~2b\n  value: x\n", J6902)
patch("json6902-remove-missing", "- op: remove\n  path: /spec/nothere\n", J6902)
patch("json6902-replace-missing", "- op: replace\n  path: /spec/nothere/deeper\n  value: 1\n", J6902)
patch("json6902-add-missing-parent", "- op: add\n  path: /spec/a/b/c\n  value: 1\n", J6902)
patch("json6902-index-out-of-range", "- op: add\n  path: /spec/template/spec/containers/5\n  value: {name: x}\n", J6902)
patch("json6902-index-not-number", "- op: replace\n  path: /spec/template/spec/containers/first/image\n  value: x\n", J6902)
patch("json6902-move-from-missing", "- op: move\n  from: /spec/nothere\n  path: /spec/x\n", J6902)
patch("json6902-copy-without-from", "- op: copy\n  path: /spec/x\n", J6902)
patch("json6902-test-fails", "- op: test\n  path: /spec/replicas\n  value: 5\n", J6902)
patch("json6902-add-without-value", "- op: add\n  path: /spec/x\n", J6902)
patch("json6902-patch-is-map", "op: add\npath: /spec/x\nvalue: 1\n", "patchesJson6902:\n- target: {group: apps, version: v1, kind: Deployment, name: web}\n  path: p.yaml\n")
patch("json6902-ops-not-maps", "- add\n- remove\n", J6902)
patch("json6902-bad-json", '[{"op": "add", "path": "/x", "value": 1,]\n', J6902)
patch("json6902-target-no-match", "- op: add\n  path: /spec/x\n  value: 1\n", "patches:\n- path: p.yaml\n  target:\n    kind: StatefulSet\n")
patch("json6902-legacy-target-without-version", "- op: add\n  path: /spec/x\n  value: 1\n", "patchesJson6902:\n- target: {kind: Deployment, name: web}\n  path: p.yaml\n")
patch("json6902-remove-root", "- op: remove\n  path: ''\n", J6902)
patch("json6902-replace-metadata-with-scalar", "- op: replace\n  path: /metadata\n  value: 7\n", J6902)

# --- replacements ---------------------------------------------------------------------------------------
REP_K = "resources:\n- deploy.yaml\n- cm.yaml\n"
kust("replacement-source-missing", REP_K + "replacements:\n- targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.x]\n")
kust("replacement-source-not-found", REP_K + "replacements:\n- source: {kind: Secret, name: nope}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.x]\n")
kust("replacement-source-field-missing", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.nothere}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.x]\n")
kust("replacement-source-field-is-map", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.x]\n    options: {create: true}\n")
kust("replacement-targets-missing", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n")
kust("replacement-target-without-select", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n  targets:\n  - fieldPaths: [metadata.labels.x]\n")
kust("replacement-target-path-missing-no-create", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.nothere.x]\n")
kust("replacement-bad-field-path-syntax", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: ['spec.template.spec.containers.[name=web.image']\n")
kust("replacement-delimiter-index-out-of-range", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.spec.containers.0.image]\n    options: {delimiter: ':', index: 5}\n")
kust("replacement-unknown-field", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n  destinations: []\n")
kust("replacement-path-and-inline", REP_K + "replacements:\n- path: r.yaml\n  source: {kind: ConfigMap, name: cm}\n", {"r.yaml": "source: {kind: ConfigMap, name: cm, fieldPath: data.a}\ntargets: []\n"})
kust("replacement-file-is-list-of-scalars", REP_K + "replacements:\n- path: r.yaml\n", {"r.yaml": "- a\n- b\n"})
kust("replacement-source-ambiguous", "resources:\n- deploy.yaml\n- cm.yaml\n- cm2.yaml\nreplacements:\n- source: {kind: ConfigMap, fieldPath: data.a}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [metadata.labels.x]\n", {"cm2.yaml": CM.replace("name: cm", "name: cm2")})
kust("replacement-select-bad-regex", REP_K + "replacements:\n- source: {kind: ConfigMap, name: cm, fieldPath: data.a}\n  targets:\n  - select: {kind: 'Deploy[ment'}\n    fieldPaths: [metadata.labels.x]\n")

# --- generators ----------------------------------------------------------------------------------
kust("generator-env-line-without-equals", "configMapGenerator:\n- name: c\n  envs:\n  - a.env\n", {"a.env": "GOOD=1\nbad line\n"})
kust("generator-env-invalid-key", "configMapGenerator:\n- name: c\n  envs:\n  - a.env\n", {"a.env": "1BAD-KEY!=1\n"})
kust("generator-env-invalid-utf8", "configMapGenerator:\n- name: c\n  envs:\n  - a.env\n", {"a.env": b"A=\xff\xfe\n"})
kust("generator-env-bom", "configMapGenerator:\n- name: c\n  envs:\n  - a.env\n", {"a.env": b"\xef\xbb\xbfA=1\n"})
kust("generator-env-empty-key", "configMapGenerator:\n- name: c\n  envs:\n  - a.env\n", {"a.env": "=value\n"})
kust("generator-env-duplicate-key", "configMapGenerator:\n- name: c\n  envs:\n  - a.env\n", {"a.env": "A=1\nA=2\n"})
kust("generator-env-export-prefix", "configMapGenerator:\n- name: c\n  envs:\n  - a.env\n", {"a.env": "export A=1\n"})
kust("generator-literal-without-equals", "configMapGenerator:\n- name: c\n  literals:\n  - novalue\n")
kust("generator-literal-duplicate-key", "configMapGenerator:\n- name: c\n  literals:\n  - a=1\n  - a=2\n")
kust("generator-literal-invalid-key", "configMapGenerator:\n- name: c\n  literals:\n  - 'bad key=1'\n")
kust("generator-literal-is-map", "configMapGenerator:\n- name: c\n  literals:\n    a: 1\n")
kust("generator-file-key-invalid", "configMapGenerator:\n- name: c\n  files:\n  - 'bad/key=a.txt'\n", {"a.txt": "x\n"})
kust("generator-file-is-directory", "configMapGenerator:\n- name: c\n  files:\n  - sub\n", {"sub/a.txt": "x\n"})
kust("generator-without-name", "configMapGenerator:\n- literals:\n  - a=1\n")
kust("generator-unknown-behavior", "configMapGenerator:\n- name: c\n  behavior: explode\n  literals:\n  - a=1\n")
kust("generator-merge-without-base", "configMapGenerator:\n- name: c\n  behavior: merge\n  literals:\n  - a=1\n")
kust("generator-replace-without-base", "configMapGenerator:\n- name: c\n  behavior: replace\n  literals:\n  - a=1\n")
kust("generator-duplicate-names", "configMapGenerator:\n- name: c\n  literals: [a=1]\n- name: c\n  literals: [b=2]\n")
kust("generator-unknown-field", "configMapGenerator:\n- name: c\n  literal:\n  - a=1\n")
kust("generator-secret-bad-type", "secretGenerator:\n- name: s\n  type: 7\n  literals:\n  - a=1\n")
kust("generator-options-labels-not-strings", "configMapGenerator:\n- name: c\n  literals: [a=1]\n  options:\n    labels:\n      a: [1]\n")
kust("generator-entry-is-string", "configMapGenerator:\n- c\n")
kust("generator-file-and-literal-same-key", "configMapGenerator:\n- name: c\n  literals: [a.txt=1]\n  files: [a.txt]\n", {"a.txt": "x\n"})

# --- components -----------------------------------------------------------------------------------------------
COMP = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
case("component-kind-kustomization", {"kustomization.yaml": K_DEPLOY + "components:\n- comp\n", "deploy.yaml": DEPLOY, "comp/kustomization.yaml": "namePrefix: x-\n"})
case("component-is-a-file", {"kustomization.yaml": K_DEPLOY + "components:\n- comp.yaml\n", "deploy.yaml": DEPLOY, "comp.yaml": COMP + "namePrefix: x-\n"})
case("component-in-resources", {"kustomization.yaml": "resources:\n- deploy.yaml\n- comp\n", "deploy.yaml": DEPLOY, "comp/kustomization.yaml": COMP + "namePrefix: x-\n"})
case("component-wrong-api-version", {"kustomization.yaml": K_DEPLOY + "components:\n- comp\n", "deploy.yaml": DEPLOY, "comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Component\nnamePrefix: x-\n"})
case("component-bad-yaml", {"kustomization.yaml": K_DEPLOY + "components:\n- comp\n", "deploy.yaml": DEPLOY, "comp/kustomization.yaml": COMP + "namePrefix: [x-\n"})
case("component-patch-no-match", {"kustomization.yaml": K_DEPLOY + "components:\n- comp\n", "deploy.yaml": DEPLOY, "comp/kustomization.yaml": COMP + "patches:\n- patch: |-\n    apiVersion: v1\n    kind: Service\n    metadata:\n      name: nope\n"})
case("components-is-string", {"kustomization.yaml": K_DEPLOY + "components: comp\n", "deploy.yaml": DEPLOY, "comp/kustomization.yaml": COMP})

# --- selectors ---------------------------------------------------------------------------------------------
SEL = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n"
patch("selector-label-bad-syntax", SEL, "patches:\n- path: p.yaml\n  target:\n    labelSelector: 'app in (web'\n")
patch("selector-label-bad-operator", SEL, "patches:\n- path: p.yaml\n  target:\n    labelSelector: 'app ~= web'\n")
patch("selector-annotation-bad-syntax", SEL, "patches:\n- path: p.yaml\n  target:\n    annotationSelector: '==x'\n")
patch("selector-label-invalid-value", SEL, "patches:\n- path: p.yaml\n  target:\n    labelSelector: 'app=we b'\n")
patch("selector-is-list", SEL, "patches:\n- path: p.yaml\n  target:\n  - kind: Deployment\n")
patch("selector-kind-bad-regex", SEL, "patches:\n- path: p.yaml\n  target:\n    kind: '(Deployment'\n")

# --- function and builtin configs ------------------------------------------------------------------------------------
FN_ANNOT = "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.sh\n"
kust("fn-exec-without-flags", K_DEPLOY + "transformers:\n- fn.yaml\n", {"fn.yaml": FN_ANNOT})
kust("fn-container-without-flags", K_DEPLOY + "transformers:\n- fn.yaml\n", {"fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example.com/fn:1\n"})
kust("fn-annotation-bad-yaml", K_DEPLOY + "transformers:\n- fn.yaml\n", {"fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: '{exec: [unclosed'\n"})
kust("fn-unknown-kind-no-annotation", K_DEPLOY + "transformers:\n- fn.yaml\n", {"fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n"})
kust("fn-builtin-unknown-kind", K_DEPLOY + "transformers:\n- t.yaml\n", {"t.yaml": "apiVersion: builtin\nkind: NoSuchTransformer\nmetadata:\n  name: t\n"})
kust("fn-builtin-bad-config", K_DEPLOY + "transformers:\n- t.yaml\n", {"t.yaml": "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: t\nprefix: [a]\n"})
kust("fn-builtin-missing-metadata", K_DEPLOY + "transformers:\n- t.yaml\n", {"t.yaml": "apiVersion: builtin\nkind: PrefixSuffixTransformer\nprefix: a-\n"})
kust("fn-generator-bad-yaml", K_DEPLOY + "generators:\n- g.yaml\n", {"g.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: g\n"})
kust("fn-transformers-inline-string", K_DEPLOY + "transformers:\n- |\n  apiVersion: builtin\n  kind: NoSuchTransformer\n  metadata:\n    name: t\n")
kust("fn-starlark-without-flags", K_DEPLOY + "transformers:\n- fn.yaml\n", {"fn.yaml": "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n      starlark:\n        path: fn.star\n"})

# --- vars ---------------------------------------------------------------------------------------------
VAR_DEPLOY = DEPLOY.replace("image: nginx:1.25", "image: nginx:1.25\n        args: [\"$(CM_A)\"]")
kust("vars-missing-objref", "resources:\n- d.yaml\n- cm.yaml\nvars:\n- name: CM_A\n  fieldref:\n    fieldpath: data.a\n", {"d.yaml": VAR_DEPLOY})
kust("vars-objref-not-found", "resources:\n- d.yaml\n- cm.yaml\nvars:\n- name: CM_A\n  objref: {kind: ConfigMap, name: nope, apiVersion: v1}\n  fieldref:\n    fieldpath: data.a\n", {"d.yaml": VAR_DEPLOY})
kust("vars-duplicate-name", "resources:\n- d.yaml\n- cm.yaml\nvars:\n- name: CM_A\n  objref: {kind: ConfigMap, name: cm, apiVersion: v1}\n- name: CM_A\n  objref: {kind: ConfigMap, name: cm, apiVersion: v1}\n", {"d.yaml": VAR_DEPLOY})
kust("vars-fieldpath-missing", "resources:\n- d.yaml\n- cm.yaml\nvars:\n- name: CM_A\n  objref: {kind: ConfigMap, name: cm, apiVersion: v1}\n  fieldref:\n    fieldpath: data.nothere\n", {"d.yaml": VAR_DEPLOY})
kust("vars-fieldpath-to-map", "resources:\n- d.yaml\n- cm.yaml\nvars:\n- name: CM_A\n  objref: {kind: ConfigMap, name: cm, apiVersion: v1}\n  fieldref:\n    fieldpath: data\n", {"d.yaml": VAR_DEPLOY})

# --- name and namespace conflicts -------------------------------------------------------------------
case("conflict-two-bases-same-resource", {"kustomization.yaml": "resources:\n- a\n- b\n", "a/kustomization.yaml": K_DEPLOY, "a/deploy.yaml": DEPLOY, "b/kustomization.yaml": K_DEPLOY, "b/deploy.yaml": DEPLOY})
case("conflict-generator-and-resource", {"kustomization.yaml": "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: cm\n  literals: [a=1]\n  options: {disableNameSuffixHash: true}\n", "cm.yaml": CM})
kust("namespace-on-cluster-scoped-conflict", "namespace: x\nresources:\n- ns.yaml\n- ns2.yaml\n", {"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n", "ns2.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"})

# --- where an error is written --------------------------------------------------------------------
INLINE_OPS = "- op: replace\n      path: /spec/replicas\n      value: 3\n    - op: add\n      path: /spec/a/b\n      value: 1\n"
kust("json6902-inline-op-fails", K_DEPLOY + "patches:\n- target:\n    kind: Deployment\n  patch: |-\n    " + INLINE_OPS)
kust("json6902-inline-indent-indicator", K_DEPLOY + "patches:\n- target:\n    kind: Deployment\n  patch: |2-\n    " + INLINE_OPS)
kust("json6902-inline-flow", K_DEPLOY + "patches:\n- target: {kind: Deployment}\n  patch: '[{\"op\": \"add\", \"path\": \"/spec/a/b\", \"value\": 1}]'\n")
kust("smp-inline-type-mismatch", K_DEPLOY + "patches:\n- patch: |\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n    spec:\n      template:\n      - a\n")
patch("smp-psm-type-mismatch", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: [1]\n  template:\n  - a\n", "patchesStrategicMerge:\n- p.yaml\n")
patch("json6902-legacy-op-fails", "- op: test\n  path: /spec/replicas\n  value: 1\n- op: remove\n  path: /spec/nothere\n", "patchesJson6902:\n- target: {group: apps, version: v1, kind: Deployment, name: web}\n  path: p.yaml\n")

kust("json6902-flow-yaml-list", K_DEPLOY + "patches:\n- target: {kind: Deployment}\n  patch: '[{op: add, path: /spec/replicas, value: 1}]'\n")
patch("json6902-legacy-flow-yaml-file", "[{op: add, path: /spec/replicas, value: 4}]\n", "patchesJson6902:\n- target: {group: apps, version: v1, kind: Deployment, name: web}\n  path: p.yaml\n")
patch("json6902-json-syntax-error-line", '[\n  {"op": "add", "path": "/spec/replicas", "value": 4},\n  {"op": "add" "path": "/spec/x"}\n]\n', J6902)


def write_case(name, files):
    d = os.path.join(HERE, name)
    shutil.rmtree(os.path.join(d, "in"), ignore_errors=True)
    for rel, content in files.items():
        path = os.path.join(d, "in", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        with open(path, "wb") as f:
            f.write(data)


def oracle(name):
    d = os.path.join(HERE, name)
    r = subprocess.run(["kubectl", "kustomize", "in"], cwd=d, capture_output=True, timeout=60)
    with open(os.path.join(d, "kubectl_exit"), "w") as f:
        f.write("0\n" if r.returncode == 0 else "1\n")


def main():
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    for name in names:
        assert name in CASES, name
    for name, files in CASES.items():
        if names and name not in names:
            continue
        write_case(name, files)
        if "--oracle" in sys.argv:
            oracle(name)
    print(f"{len(CASES)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
