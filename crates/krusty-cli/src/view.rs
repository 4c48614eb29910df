//! `krusty view catalog REF`: what a function catalog holds (publisher,
//! functions, versions, runtimes and hashes), to decide whether to trust
//! it (docs/catalog.md). One fact a line: a value the catalog gives that
//! could forge or hide a line, or be read two ways, is printed quoted with
//! its control characters escaped ([`shown`]).

use std::fmt::Write;

use krusty_api::catalog::{read_one, Loaded};
use krusty_api::schema::catalog::{Catalog, RuntimeDef};
use krusty_api::FetchOptions;

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
            shown(s)
        }
    };
    // Credentials in a URL are never shown (`https://***@host/...`).
    let reference = &krusty_api::redact(reference);
    let _ = writeln!(out, "catalog: {}", shown(reference));
    let _ = writeln!(
        out,
        "read from: {}",
        shown(&krusty_api::redact(&loaded.from))
    );
    let _ = writeln!(out, "kind: {}", shown(&c.kind));
    let _ = writeln!(out, "name: {}", or_none(&c.name));
    let _ = writeln!(out, "trust it with: --trusted-catalog {}", shown(reference));
    let _ = writeln!(out, "functions: {}", c.functions.len());
    for f in &c.functions {
        let _ = writeln!(out, "\n- {} {}", shown(&f.group), shown(&f.kind));
        let _ = writeln!(out, "  publisher: {}", or_none(&f.publisher));
        if !f.description.is_empty() {
            let _ = writeln!(out, "  description: {}", shown(&f.description));
        }
        if !f.home.is_empty() {
            let _ = writeln!(out, "  home: {}", shown(&f.home));
        }
        if !f.maintainers.is_empty() {
            let _ = writeln!(out, "  maintainers: {}", listed(&f.maintainers));
        }
        if !f.tags.is_empty() {
            let _ = writeln!(out, "  tags: {}", listed(&f.tags));
        }
        for v in &f.versions {
            let _ = writeln!(
                out,
                "  version {} (apiVersion {}):",
                shown(&v.name),
                shown(&format!("{}/{}", f.group, v.name))
            );
            let _ = writeln!(out, "    idempotent: {}", v.idempotent);
            if !v.spec_versions.is_empty() {
                let _ = writeln!(out, "    function spec: {}", listed(&v.spec_versions));
            }
            if !v.license.is_empty() {
                let _ = writeln!(out, "    license: {}", shown(&v.license));
            }
            if !v.usage.is_empty() {
                let _ = writeln!(out, "    usage: {}", shown(&v.usage));
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
        let _ = writeln!(
            out,
            "    container: {} {}",
            shown(&c.image),
            hash(&c.sha256)
        );
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
            shown(&p.os),
            shown(&p.arch),
            shown(&p.bin),
            shown(&p.uri),
            hash(&p.sha256)
        );
    }
    if let Some(url) = &r.starlark {
        let _ = writeln!(out, "    starlark: {} (no hash)", shown(url));
    }
}

/// `value` as one unambiguous word of a line: as it is when it is plain
/// (see [`needs_quotes`]), else [`quoted`]. So a catalog cannot print a
/// line of its own, move the cursor, hide text, or pass one value off as
/// another.
pub fn shown(value: &str) -> String {
    if needs_quotes(value) {
        quoted(value)
    } else {
        value.to_string()
    }
}

/// `value` in double quotes, with `"` and `\` escaped, `\n`, `\r`, `\t`
/// and `\0` for those characters and `\u{HEX}` for every other control
/// or invisible formatting character ([`hidden`]: ANSI escapes,
/// bidirectional overrides, zero-width characters, line separators).
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether `value` must be quoted to be read back exactly: it is empty;
/// holds a [`hidden`] character or white space other than a space
/// (every multi-line value); starts or ends with a space; or starts with
/// `"` or `(` (the forms quoted values and `(none)` take).
fn needs_quotes(value: &str) -> bool {
    value.is_empty()
        || value.starts_with(['"', '(', ' '])
        || value.ends_with(' ')
        || value
            .chars()
            .any(|c| hidden(c) || (c.is_whitespace() && c != ' '))
}

/// A character that is not printed as itself: a control character (C0,
/// DEL, C1), or an invisible formatting one (zero-width characters,
/// bidirectional marks and overrides, line and paragraph separators,
/// the byte-order mark).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00ad}'
            | '\u{061c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}')
}

/// A list of values separated by `, `: each [`shown`], and [`quoted`]
/// when it holds a `,` (so one item cannot read as two).
fn listed(items: &[String]) -> String {
    items
        .iter()
        .map(|i| if i.contains(',') { quoted(i) } else { shown(i) })
        .collect::<Vec<_>>()
        .join(", ")
}
