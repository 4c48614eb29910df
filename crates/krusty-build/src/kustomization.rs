//! Reading a folder's kustomization file: which of the names it has, and
//! its text through the build's loader. The format itself is
//! [`krusty_schema::kustomization`].

use std::path::{Path, PathBuf};

pub use krusty_schema::kustomization::*;
use krusty_schema::KustomizeVersion;

use crate::error::{BuildError, BuildResult};

/// Finds and parses the kustomization file in the loader's root.
pub fn load(
    loader: &crate::loader::Loader,
    version: KustomizeVersion,
) -> BuildResult<(Kustomization, PathBuf)> {
    let dir = &loader.root;
    // The usual name is opened and read at once; the stat that finds
    // any other name also gives the size to read by. A name the load
    // restrictor refuses counts as missing.
    let mut found: Vec<crate::loader::FoundFile> = Vec::new();
    let mut refused = None;
    for (i, name) in FILE_NAMES.iter().enumerate() {
        match loader.kustomization_file(name, i == 0) {
            Ok(file) => found.extend(file),
            Err(e) => refused = refused.or(Some(e)),
        }
    }
    if found.len() > 1 {
        return Err(BuildError::new(format!(
            "Found multiple kustomization files under: {}",
            dir.display()
        )));
    }
    let Some(found) = found.pop() else {
        let why = refused.map(|e| format!(": {}", e)).unwrap_or_default();
        return Err(BuildError::new(format!(
            "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'{why}",
            dir.display()
        )));
    };
    let path = found.path.clone();
    let text = crate::loader::read_found_text(found, loader.reads.as_deref())?;
    let k = parse_file(&text, &path, version)?;
    Ok((k, path))
}

/// Parses `text` as the kustomization file `path`: errors name the file,
/// and so do the vars it declares (they are resolved at the top of the
/// build, where their messages name the file that declares them).
pub fn parse_file(
    text: &str,
    path: &Path,
    version: KustomizeVersion,
) -> BuildResult<Kustomization> {
    let mut k = Kustomization::parse(text, version).map_err(|e| {
        BuildError::from(e).context(format!("invalid kustomization file {}", path.display()))
    })?;
    for var in &mut k.vars {
        var.written_at.0 = Some(path.display().to_string());
    }
    Ok(k)
}
