//! `krusty view catalog REF`: what a function catalog holds (publisher,
//! functions, versions, runtimes and hashes), to decide whether to trust
//! it (docs/catalog.md).

use std::fmt::Write;

use krusty_build::catalog::schema::{Catalog, RuntimeDef};
use krusty_build::catalog::{read_one, Loaded};
use krusty_build::FetchOptions;

/// `krusty view`.
#[derive(clap::Subcommand)]
pub enum ViewCommand {
    /// Prints a function catalog: its name, and for each function its
    /// group and kind, publisher, versions, runtimes and their hashes.
    Catalog {
        /// The catalog: a local path, an https:// URL, a git reference or
        /// an oci:// reference, as written in `catalogs:`.
        #[arg(value_name = "REF")]
        reference: String,
        /// Use only what krusty's cache holds.
        #[arg(long = "offline")]
        offline: bool,
    },
}

/// Runs a `view` command.
pub fn run(command: &ViewCommand) -> Result<(), String> {
    let ViewCommand::Catalog { reference, offline } = command;
    let dir = std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?;
    let options = FetchOptions {
        offline: *offline,
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        ..FetchOptions::default()
    };
    let loaded = read_one(reference, &dir, options).map_err(|e| e.to_string())?;
    print!("{}", describe(reference, &loaded));
    Ok(())
}

/// The text `view catalog` prints: stable, one fact a line.
pub fn describe(reference: &str, loaded: &Loaded) -> String {
    let c: &Catalog = &loaded.catalog;
    let mut out = String::new();
    let or_none = |s: &str| {
        if s.is_empty() {
            "(none)".to_string()
        } else {
            s.to_string()
        }
    };
    let _ = writeln!(out, "catalog: {reference}");
    let _ = writeln!(out, "read from: {}", loaded.from);
    let _ = writeln!(out, "kind: {}", c.kind);
    let _ = writeln!(out, "name: {}", or_none(&c.name));
    let _ = writeln!(out, "trust it with: --trusted-catalog {reference}");
    if !c.name.is_empty() {
        let _ = writeln!(out, "           or: --trusted-catalog {}", c.name);
    }
    let _ = writeln!(out, "functions: {}", c.functions.len());
    for f in &c.functions {
        let _ = writeln!(out, "\n- {} {}", f.group, f.kind);
        let _ = writeln!(out, "  publisher: {}", or_none(&f.publisher));
        if !f.description.is_empty() {
            let _ = writeln!(out, "  description: {}", f.description);
        }
        if !f.home.is_empty() {
            let _ = writeln!(out, "  home: {}", f.home);
        }
        if !f.maintainers.is_empty() {
            let _ = writeln!(out, "  maintainers: {}", f.maintainers.join(", "));
        }
        if !f.tags.is_empty() {
            let _ = writeln!(out, "  tags: {}", f.tags.join(", "));
        }
        for v in &f.versions {
            let _ = writeln!(
                out,
                "  version {} (apiVersion {}/{}):",
                v.name, f.group, v.name
            );
            let _ = writeln!(out, "    idempotent: {}", v.idempotent);
            if !v.spec_versions.is_empty() {
                let _ = writeln!(out, "    function spec: {}", v.spec_versions.join(", "));
            }
            if !v.license.is_empty() {
                let _ = writeln!(out, "    license: {}", v.license);
            }
            if !v.usage.is_empty() {
                let _ = writeln!(out, "    usage: {}", v.usage);
            }
            runtime_lines(&mut out, &v.runtime);
        }
    }
    out
}

/// The lines of a runtime: each container, platform and program, with
/// its hash (or that it has none).
fn runtime_lines(out: &mut String, r: &RuntimeDef) {
    let hash = |h: &Option<String>| match h {
        Some(h) => format!("sha256:{h}"),
        None => "(no sha256)".to_string(),
    };
    if let Some(c) = &r.container {
        let _ = writeln!(out, "    container: {} {}", c.image, hash(&c.sha256));
        if c.require_network {
            let _ = writeln!(out, "      requires network (--network)");
        }
        if c.require_storage_mount {
            let _ = writeln!(out, "      requires a storage mount (--mount)");
        }
    }
    for p in r.exec.iter().flatten() {
        let _ = writeln!(
            out,
            "    exec {}/{}: {} from {} {}",
            p.os,
            p.arch,
            p.bin,
            p.uri,
            hash(&p.sha256)
        );
    }
    if let Some(url) = &r.starlark {
        let _ = writeln!(out, "    starlark: {url} (no hash)");
    }
}
