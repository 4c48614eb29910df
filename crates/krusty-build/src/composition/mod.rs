//! Composition (KEP-2299): an ordered list of transformer configs —
//! builtins, KRM functions, resource loading and inline Kustomizations —
//! imported, overridden and reordered across files, consolidated into one
//! list and run in order. `docs/composition.md` states the rules.

mod consolidate;
mod run;

use std::path::Path;

use krusty_schema::composition as schema;
use krusty_yaml::Pos;

pub use consolidate::{consolidate, find, Transformer};
pub(crate) use run::{pipeline, run};
pub use schema::API_VERSION;

use crate::error::{BuildError, BuildResult};

/// The names a composition file may have.
pub const FILE_NAMES: [&str; 2] = ["composition.yaml", "composition.yml"];

/// Reads the text of a composition file (`path` names it in errors) as a
/// build reads it, without following its imports or file references.
pub fn check(path: &Path, text: &str) -> BuildResult<()> {
    schema::parse(path, text).map(drop).map_err(unreadable)
}

/// A composition file that does not read, as its message: where it is
/// written is part of the text, so the entry that names the file is still
/// located after it (`error (kustomization.yaml, line L, column C)`).
pub(crate) fn unreadable(e: krusty_schema::SchemaError) -> BuildError {
    BuildError::new(e.to_string())
}

/// An error about what `file` (a composition file) asks for, at `pos`:
/// `composition file FILE: message (line L, column C)`.
fn error_at(file: &Path, pos: Pos, message: impl std::fmt::Display) -> BuildError {
    BuildError::new(format!(
        "composition file {}: {message} (line {}, column {})",
        file.display(),
        pos.line,
        pos.col
    ))
}

/// The consolidated list as YAML documents (what `krusty composition
/// consolidate` prints).
pub fn to_yaml(list: &[Transformer]) -> BuildResult<String> {
    let mut out = String::new();
    for (i, t) in list.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let text = krusty_yaml::to_kustomize_yaml(&t.config)
            .map_err(|e| BuildError::new(format!("{}: {e}", t.describe())))?;
        out.push_str(&text);
    }
    Ok(out)
}
