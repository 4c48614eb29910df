//! Building one kustomization target: accumulate its resources (recursing
//! into directories), then order the result.

use std::path::{Path, PathBuf};

use krusty_resource::{sort_legacy, LegacyOrder, ResMap, Resource};

use crate::error::{BuildError, BuildResult};
use crate::kustomization::{Kustomization, SortOptions};
use crate::loader::{Entry, LoadRestrictor, Loader};
use crate::read::resources_from_text;

/// Options for a build.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Which files kustomizations may read.
    pub load_restrictor: LoadRestrictor,
}

/// The result of a build: resources in output order, and warnings for stderr.
#[derive(Debug, Default)]
pub struct BuildOutput {
    /// Resources in output order.
    pub resources: Vec<Resource>,
    /// Warnings (deprecations) to print on stderr.
    pub warnings: Vec<String>,
}

/// Builds the kustomization in `dir`.
pub fn build(dir: &Path, opts: &BuildOptions) -> BuildResult<BuildOutput> {
    let mut ctx = Context {
        chain: Vec::new(),
        warnings: Vec::new(),
    };
    let loader = Loader::new(dir, opts.load_restrictor)?;
    let (resmap, kustomization) = ctx.target(&loader)?;
    let mut resources = resmap.into_vec();
    match kustomization.sort_options.unwrap_or_default() {
        SortOptions::Fifo => {}
        SortOptions::Legacy => sort_legacy(&mut resources, &LegacyOrder::default()),
        SortOptions::LegacyWith {
            order_first,
            order_last,
        } => sort_legacy(&mut resources, &LegacyOrder::new(order_first, order_last)),
    }
    Ok(BuildOutput {
        resources,
        warnings: ctx.warnings,
    })
}

struct Context {
    /// Kustomization roots being built, outermost first (for cycle detection).
    chain: Vec<PathBuf>,
    warnings: Vec<String>,
}

impl Context {
    /// Builds one kustomization directory into a resource map.
    fn target(&mut self, loader: &Loader) -> BuildResult<(ResMap, Kustomization)> {
        let (k, _path) = Kustomization::load(&loader.root).map_err(|e| {
            e.context(format!(
                "couldn't make target for path '{}'",
                loader.root.display()
            ))
        })?;
        self.warnings.extend(k.warnings.iter().cloned());
        self.chain.push(loader.root.clone());
        let result = self.accumulate(loader, &k);
        self.chain.pop();
        Ok((result?, k))
    }

    fn accumulate(&mut self, loader: &Loader, k: &Kustomization) -> BuildResult<ResMap> {
        let mut resmap = ResMap::new();
        for entry in &k.resources {
            self.accumulate_entry(loader, entry, &mut resmap)
                .map_err(|e| e.context("accumulating resources"))?;
        }
        Ok(resmap)
    }

    fn accumulate_entry(
        &mut self,
        loader: &Loader,
        entry: &str,
        into: &mut ResMap,
    ) -> BuildResult<()> {
        if is_remote(entry) {
            return Err(BuildError::new(format!(
                "accumulating resources from '{entry}': remote resources are not supported by krusty yet"
            )));
        }
        let from = |e: BuildError| e.context(format!("accumulating resources from '{entry}'"));
        match loader.entry(entry).map_err(from)? {
            Entry::File(path) => {
                let text = loader.read(&path).map_err(from)?;
                for r in resources_from_text(&text, &path).map_err(from)? {
                    into.append(r)
                        .map_err(|e| from(BuildError::new(e.to_string())))?;
                }
            }
            Entry::Dir(dir) => {
                if let Some(visited) = self.chain.iter().find(|v| v.starts_with(&dir)) {
                    let cycle: Vec<String> = self
                        .chain
                        .iter()
                        .map(|p| p.display().to_string())
                        .chain(std::iter::once(dir.display().to_string()))
                        .collect();
                    return Err(from(BuildError::new(format!(
                        "cycle detected: candidate root '{}' contains visited root '{}' ({})",
                        dir.display(),
                        visited.display(),
                        cycle.join(" -> ")
                    ))));
                }
                let sub = Loader::new(&dir, loader.restrictor)?;
                let (resmap, sub_k) = self.target(&sub).map_err(from)?;
                if sub_k.kind == "Component" {
                    return Err(from(BuildError::new(format!(
                        "expected kind 'Kustomization' for path '{}' but got 'Component'",
                        dir.display()
                    ))));
                }
                into.append_all(resmap).map_err(|e| {
                    from(BuildError::new(format!(
                        "recursed merging from path '{}': {e}",
                        dir.display()
                    )))
                })?;
            }
        }
        Ok(())
    }
}

/// `true` for URLs and git references, which name remote bases.
fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("git@")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
}
