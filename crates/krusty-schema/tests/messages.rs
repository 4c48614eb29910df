//! The exact words of catalog and composition errors, pinned: every
//! unknown field, wrong type, empty or multi-document file, missing
//! required field and invalid YAML reads as it always has.

use std::path::Path;

use krusty_schema::{catalog, composition};

const CAT: &str = "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\n";
const FN: &str = "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec:\n  krmFunctions:\n  - group: g\n    names: {kind: K}\n    versions:\n    - name: v1\n";
const RT: &str = "      runtime: {container: {image: i}}\n";
const BARE: &str = "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nspec:\n  krmFunctions:\n  - versions: [{name: v1, runtime: {container: {image: i}}}]\n";
const COMP: &str = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Composition\n";

/// Files without a document of content.
const EMPTY: [&str; 4] = ["", "---\n", "# nothing\n", "---\n---\n"];

/// `head` followed by each of `tails`.
fn after(head: &str, tails: &[&str]) -> Vec<String> {
    tails.iter().map(|tail| format!("{head}{tail}")).collect()
}

/// The catalog inputs: each suffix of `FN`, `CAT` or a whole text.
fn catalog_inputs() -> Vec<String> {
    let mut out = after("", &EMPTY);
    out.extend(after(
        "",
        &[
            // invalid YAML, not a mapping
            "kind: [\n",
            "a: b\n c\n",
            "\t- x\n",
            "~\n",
            "[a]\n",
            "plain\n",
        ],
    ));
    out.extend(after(
        CAT,
        &[
            // the top level
            "spec: {krmFunctions: []}\ncolour: red\n",
            "spec: [a]\n",
            "spec: ~\n",
            "spec: {}\n",
            "",
            "spec: {krmFunctions: x}\n",
            "spec: {krmFunctions: ~}\n",
            "spec: {krmFunctions: [x]}\n",
            "spec: {krmFunctions: [~]}\n",
            "spec: {krmFunctions: [], extra: 1}\n",
            "metadata: 3\nspec: {krmFunctions: []}\n",
            "metadata: ~\nspec: {krmFunctions: []}\n",
            "metadata: {name: [a]}\nspec: {krmFunctions: []}\n",
            "metadata: {name: 1}\nspec: {krmFunctions: []}\n",
            "metadata: {name: true}\nspec: {krmFunctions: []}\n",
            "metadata: {name: ~}\nspec: {krmFunctions: []}\n",
            "metadata: {namespace: {a: b}}\nspec: {krmFunctions: []}\n",
            "metadata: {labels: a}\nspec: {krmFunctions: []}\n",
            "metadata: {labels: {a: [b]}}\nspec: {krmFunctions: []}\n",
            "metadata: {annotations: {a: 1}}\nspec: {krmFunctions: []}\n",
            "metadata: {labels: ~, annotations: ~, name: n}\nspec: {krmFunctions: []}\n",
            "metadata: {uid: x}\nspec: {krmFunctions: []}\n",
            "spec: {krmFunctions: []}\n---\ngarbage: [\n",
            "spec: {krmFunctions: []}\n---\nkind: Other\n",
        ],
    ));
    for (kind, api) in [
        ("kind: Catalog\n", ""),
        ("", "apiVersion: config.kubernetes.io/v1alpha1\n"),
        ("kind: [a]\n", "apiVersion: config.kubernetes.io/v1alpha1\n"),
        ("kind: Catalog\n", "apiVersion: 1\n"),
        ("kind: Catalog\n", "apiVersion: v1\n"),
        (
            "kind: Other\n",
            "apiVersion: config.kubernetes.io/v1alpha1\n",
        ),
        ("kind: ~\n", "apiVersion: config.kubernetes.io/v1alpha1\n"),
        ("kind: Catalog\n", "apiVersion: ~\n"),
    ] {
        out.push(format!("{api}{kind}spec: {{krmFunctions: []}}\n"));
    }
    for tail in [
        "",
        "spec: ~\n",
        "spec: [a]\n",
        "spec: {group: g, kind: K, versions: [{name: v1, runtime: {starlark: s}}], krmFunctions: []}\n",
        "spec: {group: g, names: {kind: K}, versions: [{name: v1, runtime: {container: {image: i}}}]}\n",
    ] {
        out.push(format!(
            "apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\n{tail}"
        ));
    }
    out.extend(after(
        FN,
        &[
            // a function
            "",
            RT,
            "      colour: red\n",
            "    colour: red\n",
            "    names: {kind: K, plural: ks}\n",
            "    names: [K]\n",
            "    names: ~\n",
            "    kind: K\n",
            "    group: [g]\n",
            "    group: ~\n",
            "    description: 1\n",
            "    publisher: false\n",
            "    home: [h]\n",
            "    maintainers: a\n",
            "    maintainers: [1, a]\n",
            "    maintainers: [[a]]\n",
            "    tags: {a: b}\n",
            "    versions: x\n",
            "    versions: []\n",
            "    versions: ~\n",
            "    versions: [x]\n",
            "    versions: [~]\n",
            "    versions: [{runtime: {starlark: s}}]\n",
            "    runtime: x\n",
            "    runtime: ~\n",
            "    runtime: {}\n",
            "    runtime: {container: {image: j}}\n",
            // a version
            "      name: [v]\n",
            "      name: ~\n",
            "      idempotent: sometimes\n",
            "      idempotent: ~\n",
            "      idempotent: [true]\n",
            "      idempotent: 'true'\n",
            "      conformWithSpecVersions: v1\n",
            "      conformWithSpecVersions: [v1, [v2]]\n",
            "      usage: [u]\n",
            "      examples: e\n",
            "      license: {l: 1}\n",
            "      maintainers: ~\n",
            "      schema: x\n",
            "      schema: {openAPIV3Schema: x}\n",
            "      schema: {openAPIV3Schema: {}, other: 1}\n",
            "      schema: ~\n",
            // a runtime
            "      runtime: x\n",
            "      runtime: ~\n",
            "      runtime: {}\n",
            "      runtime: {wasm: {}}\n",
            "      runtime: {starlark: ''}\n",
            "      runtime: {starlark: ~}\n",
            "      runtime: {starlark: [s]}\n",
            "      runtime: {container: x}\n",
            "      runtime: {container: ~}\n",
            "      runtime: {container: {}}\n",
            "      runtime: {container: {image: ''}}\n",
            "      runtime: {container: {image: 3}}\n",
            "      runtime: {container: {image: i, tag: t}}\n",
            "      runtime: {container: {image: i, sha256: abc}}\n",
            "      runtime: {container: {image: i, sha256: [abc]}}\n",
            "      runtime: {container: {image: i, requireNetwork: yes}}\n",
            "      runtime: {container: {image: i, requireNetwork: ~}}\n",
            "      runtime: {container: {image: i, requireFilesystem: 1}}\n",
            "      runtime: {container: {image: i, requireStorageMount: [true]}}\n",
            "      runtime: {exec: x}\n",
            "      runtime: {exec: ~}\n",
            "      runtime: {exec: {}}\n",
            "      runtime: {exec: {platforms: x}}\n",
            "      runtime: {exec: {platforms: ~}}\n",
            "      runtime: {exec: {platforms: [x]}}\n",
            "      runtime: {exec: {platforms: [~]}}\n",
            "      runtime: {exec: {platforms: [{}]}}\n",
            "      runtime: {exec: {platforms: [{bin: b}]}}\n",
            "      runtime: {exec: {platforms: [{bin: b, os: o, arch: a}]}}\n",
            "      runtime: {exec: {platforms: [{bin: b, os: o, arch: a, uri: ''}]}}\n",
            "      runtime: {exec: {platforms: [{bin: [b], os: o, arch: a, uri: u}]}}\n",
            "      runtime: {exec: {platforms: [{bin: b, os: o, arch: a, uri: u, sha256: x}]}}\n",
            "      runtime: {exec: {platforms: [{bin: b, os: o, arch: a, uri: u, size: 1}]}}\n",
            "      runtime: {exec: {platforms: [], other: 1}}\n",
        ],
    ));
    out.extend(after(
        BARE,
        &[
            "    group: [g]\n    kind: K\n",
            "    group: ~\n    kind: K\n",
            "    group: ''\n    kind: K\n",
            "    group: [g]\n    colour: red\n",
            "    colour: red\n    group: [g]\n",
            "    group: g\n",
            "    group: g\n    names: [K]\n",
            "    group: g\n    names: ~\n",
            "    group: g\n    names: {}\n",
            "    group: g\n    names: {kind: K, plural: ks}\n",
            "    group: g\n    kind: ''\n",
            "    group: g\n    kind: [K]\n",
            "    group: g\n    kind: K\n    names: {kind: K}\n",
            "    group: g\n    kind: K\n    GROUP: h\n",
        ],
    ));
    out
}

fn composition_inputs() -> Vec<String> {
    let mut out = after("", &EMPTY);
    out.extend(after(
        "",
        &[
            "a: [\n",
            "a: b\n c\n",
            "~\n",
            "[a]\n",
            "plain\n",
            "kind: Composition\n",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\n",
            "apiVersion: v1\nkind: Composition\n",
            "apiVersion: [a]\nkind: Composition\n",
            "apiVersion: 1\nkind: Composition\n",
            "apiVersion: ~\nkind: Composition\n",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Other\n",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: {a: b}\n",
            "~\n---\nkind: x\n",
        ],
    ));
    out.extend(after(COMP, &[
        "",
        "colour: red\n",
        "---\nkind: Composition\n",
        "---\n~\n",
        "---\n---\n",
        "---\n[a]\n",
        "metadata: 3\n",
        "metadata: ~\n",
        "metadata: {name: [a]}\n",
        "metadata: {name: ~}\n",
        "metadata: {name: 1, namespace: true}\n",
        "metadata: {labels: a}\n",
        "metadata: {labels: ~, annotations: {a: [b]}}\n",
        "metadata: {uid: u}\n",
        "transformersFrom: x\n",
        "transformersFrom: ~\n",
        "transformersFrom: {path: x}\n",
        "transformersFrom: [x]\n",
        "transformersFrom: [~]\n",
        "transformersFrom: [{}]\n",
        "transformersFrom: [{path: [x]}]\n",
        "transformersFrom: [{path: ~}]\n",
        "transformersFrom: [{path: x, importMode: last}]\n",
        "transformersFrom: [{path: x, importMode: [a]}]\n",
        "transformersFrom: [{path: x, mode: append}]\n",
        "transformersFrom: [{path: 1, importMode: append}]\n",
        "transformersFrom: [{path: [x], mode: m}]\n",
        "transformersFrom: [{mode: m, path: [x]}]\n",
        "transformersFrom: [{path: x}]\ncolour: red\n",
        "colour: red\ntransformersFrom: x\n",
        "Transformers: []\n",
        "transformerOrder: x\n",
        "transformerOrder: ~\n",
        "transformerOrder: [x]\n",
        "transformerOrder: [{}]\n",
        "transformerOrder: [{kind: K}]\n",
        "transformerOrder: [{name: [n]}]\n",
        "transformerOrder: [{name: n, kind: [K]}]\n",
        "transformerOrder: [{name: n, apiVersion: ~}]\n",
        "transformerOrder: [{name: n, group: g}]\n",
        "catalogs: x\n",
        "catalogs: [[a]]\n",
        "catalogs: [~]\n",
        "catalogs: [1]\n",
        "transformers: x\n",
        "transformers: [~]\n",
        "transformers: [[a]]\n",
        "transformers: [{}]\n",
        "transformers: [{kind: K}]\n",
        "transformers: [{apiVersion: [a], kind: K}]\n",
        "transformers: [{apiVersion: V1, kind: K}]\n",
        "transformers: [{apiVersion: builtin}]\n",
        "transformers: [{apiVersion: builtin, kind: ''}]\n",
        "transformers: [{apiVersion: builtin, kind: [K]}]\n",
        "transformers: [{apiVersion: builtin, kind: K_}]\n",
        "transformers: [{apiVersion: builtin, kind: K, metadata: 3}]\n",
        "transformers: [{apiVersion: builtin, kind: K, metadata: {name: Bad}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, metadata: {name: [a]}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, metadata: {colour: red}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: x}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: ~}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: {wasm: {}}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: {exec: ~}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: {exec: x}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: {exec: {path: p, env: e}}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: {container: {image: i, network: true, mounts: [], envs: [], user: u}}}]\n",
        "transformers: [{apiVersion: builtin, kind: K, runtime: {starlark: {url: u, path: p, source: s}}}]\n",
        "transformers: [{apiVersion: example.com/v1, kind: K, spec: {anything: 1}}]\n",
        "transformerOverrides: x\n",
        "transformerOverrides: [x]\n",
        "transformerOverrides: [{}]\n",
        "transformerOverrides: [{$patch: delete}]\n",
        "transformerOverrides: [{$patch: sideways, apiVersion: builtin, kind: K}]\n",
        "transformerOverrides: [{$patch: [a], apiVersion: builtin, kind: K}]\n",
        "transformerOverrides: [{apiVersion: builtin, kind: K, metadata: {$patch: delete}}]\n",
        "transformerOverrides: [{apiVersion: builtin, kind: K, spec: {$patch: nope}}]\n",
        "transformerOverrides: [{apiVersion: builtin, kind: K, spec: {a: {$patch: ~}}}]\n",
        "transformerOverrides: [{apiVersion: builtin, $patch: replace, kind: K, metadata: {colour: red}}]\n",
        "transformerOverrides: [{apiVersion: builtin, kind: K, spec: [{$patch: nope}]}]\n",
    ]));
    out
}

/// How a catalog input reads: its error as printed both ways, or `ok`.
fn catalog_outcome(text: &str) -> String {
    match catalog::parse(text) {
        Ok(c) => format!("ok {} {}", c.kind, c.functions.len()),
        Err(e) => format!("{e}\n{}\n{}", e.place_first("c.yaml"), e.has_location()),
    }
}

fn composition_outcome(text: &str) -> String {
    match composition::parse(Path::new("c/composition.yaml"), text) {
        Ok(c) => format!(
            "ok {} {} {} {} {}",
            c.imports.len(),
            c.overrides.len(),
            c.transformers.len(),
            c.order.map_or(0, |o| o.0.len() + 1),
            c.catalogs.len()
        ),
        Err(e) => format!("{e}\n{}", e.has_location()),
    }
}

/// Every input, then how it reads.
fn outcomes() -> String {
    let mut out = String::new();
    for text in catalog_inputs() {
        out.push_str(&format!(
            "catalog {text:?}\n=> {:?}\n",
            catalog_outcome(&text)
        ));
    }
    for text in composition_inputs() {
        out.push_str(&format!(
            "composition {text:?}\n=> {:?}\n",
            composition_outcome(&text)
        ));
    }
    out
}

/// `messages.golden` holds the outcomes as they were written down; set
/// `KRUSTY_WRITE_GOLDEN=1` to write it anew after a deliberate change.
#[test]
fn every_message_reads_as_written_down() {
    let got = outcomes();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/messages.golden");
    if std::env::var_os("KRUSTY_WRITE_GOLDEN").is_some() {
        std::fs::write(&path, &got).expect("the golden file is writable");
        return;
    }
    let want = include_str!("messages.golden");
    for (g, w) in got.lines().zip(want.lines()) {
        assert_eq!(g, w);
    }
    assert_eq!(got.lines().count(), want.lines().count());
}
