//! The two sides of a change, the targets it touches, and what it does
//! to each.
//!
//! A target is touched when a path the change touches is one of the
//! files its rendering on the head side read or looked for, or lies under
//! a folder it read whole. A rendering reads the same files as long as
//! what it read is the same: the first file whose content differs is one
//! both sides read. So the head side's inputs decide alone, and a target
//! whose inputs did not change is never touched. Targets found on the
//! base side alone were removed, and are always touched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::diff::{compare, Rendering, TargetDiff};
use crate::error::{Error, Result};
use crate::git::{Repo, Tree};
use crate::target::{discover, Engines, Rendered, Side, Target, TargetKind};

/// A side of a range left empty: `HEAD`.
fn or_head(rev: &str) -> &str {
    if rev.is_empty() {
        "HEAD"
    } else {
        rev
    }
}

/// A target to compare: its base side's target, if it has one, and its
/// head side's rendering, if it has one.
type Pair = (Option<Target>, Option<(Target, Rendered)>);

/// A change between two trees of one repository, each side readable as
/// a folder.
pub struct Comparison {
    /// The base side.
    pub base: Side,
    /// The head side.
    pub head: Side,
    /// The paths that differ, relative to the top folder.
    pub changed: Vec<PathBuf>,
    /// The folders revisions were written into (removed on drop).
    _exports: Vec<tempfile::TempDir>,
}

impl Comparison {
    /// The change from `base` to `head` in the repository holding `dir`
    /// (the folder searched for targets). `base` may be a range instead,
    /// `A..B` or `A...B` (from the merge base of A and B), which gives
    /// the head too. Both revisions are written out
    /// at once; the work tree is read where it is.
    pub fn new(dir: &Path, base: &str, head: &Tree) -> Result<Comparison> {
        let dir = std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
        let repo = Repo::containing(&dir)?;
        let rel = dir
            .strip_prefix(&repo.top)
            .unwrap_or(Path::new(""))
            .to_path_buf();
        // `A..B` is from A to B; `A...B` from where B left A to B (their
        // merge base), as a pull request's changes are; an empty side is
        // HEAD.
        let (base_commit, head) = match (base.split_once("..."), base.split_once("..")) {
            (Some((a, b)), _) => {
                let (a, b) = (or_head(a), or_head(b));
                (
                    repo.merge_base(&repo.commit(a)?, &repo.commit(b)?)?,
                    Tree::Commit(repo.commit(b)?),
                )
            }
            (None, Some((a, b))) => (
                repo.commit(or_head(a))?,
                Tree::Commit(repo.commit(or_head(b))?),
            ),
            (None, None) => (
                repo.commit(base)?,
                match head {
                    Tree::Commit(rev) => Tree::Commit(repo.commit(rev)?),
                    Tree::WorkTree => Tree::WorkTree,
                },
            ),
        };
        let changed = repo.changed(&base_commit, &head)?;
        let export = |commit: &str| -> Result<(tempfile::TempDir, PathBuf)> {
            let folder = tempfile::Builder::new()
                .prefix("krusty-rev-")
                .tempdir()
                .map_err(|e| Error::io(std::env::temp_dir(), e))?;
            let top =
                std::fs::canonicalize(folder.path()).map_err(|e| Error::io(folder.path(), e))?;
            repo.export(commit, &top)?;
            Ok((folder, top))
        };
        let (base_export, head_export) = rayon::join(
            || export(&base_commit),
            || match &head {
                Tree::Commit(commit) => export(commit).map(Some),
                Tree::WorkTree => Ok(None),
            },
        );
        let (base_folder, base_top) = base_export?;
        let mut exports = vec![base_folder];
        let head_top = match head_export? {
            Some((folder, top)) => {
                exports.push(folder);
                top
            }
            None => repo.top.clone(),
        };
        let head_revision = match &head {
            Tree::Commit(commit) => commit.clone(),
            Tree::WorkTree => repo.commit("HEAD").unwrap_or_default(),
        };
        Ok(Comparison {
            base: Side::new(base_top, rel.clone(), base_commit),
            head: Side::new(head_top, rel, head_revision),
            changed,
            _exports: exports,
        })
    }

    /// Whether the change touches a rendering that read `inputs`.
    fn touches(&self, rendered: &Rendered) -> bool {
        use std::os::unix::ffi::OsStrExt;
        self.changed.iter().any(|p| {
            if p.as_os_str().as_bytes().ends_with(b"/") {
                // A whole folder of files not tracked: any input inside it.
                let inputs = &rendered.inputs;
                inputs
                    .files
                    .iter()
                    .chain(&inputs.folders)
                    .any(|i| i.starts_with(p))
                    || inputs.contains(p)
            } else {
                rendered.inputs.contains(p)
            }
        })
    }

    /// The head side's targets the change touches, each with its
    /// rendering, in discovery order.
    pub fn affected(&self, engines: &Engines) -> Result<Vec<(Target, Rendered)>> {
        let targets = discover(&self.head)?;
        let rendered: Vec<(Target, Rendered)> = targets
            .into_par_iter()
            .map(|t| {
                let r = t.render(&self.head, engines);
                (t, r)
            })
            .collect();
        Ok(rendered
            .into_iter()
            .filter(|(_, r)| self.touches(r))
            .collect())
    }

    /// What the change does to every target it touches (and every target
    /// it removes), and how many targets the two sides have in all.
    pub fn diff(&self, engines: &Engines, show_secrets: bool) -> Result<(Vec<TargetDiff>, usize)> {
        let (head_targets, base_targets) =
            rayon::join(|| discover(&self.head), || discover(&self.base));
        let (head_targets, base_targets) = (head_targets?, base_targets?);
        let mut base_by_key: BTreeMap<(TargetKind, String), Target> = base_targets
            .into_iter()
            .map(|t| ((t.kind, t.name.clone()), t))
            .collect();
        let head_rendered: Vec<(Target, Rendered)> = head_targets
            .into_par_iter()
            .map(|t| {
                let r = t.render(&self.head, engines);
                (t, r)
            })
            .collect();
        let mut total = head_rendered.len();
        let mut work: Vec<Pair> = Vec::new();
        for (t, r) in head_rendered {
            let base = base_by_key.remove(&(t.kind, t.name.clone()));
            if base.is_none() || self.touches(&r) {
                work.push((base, Some((t, r))));
            }
        }
        total += base_by_key.len();
        for t in base_by_key.into_values() {
            // A target that became a base still builds on the head side:
            // what changed is what it builds.
            let head = t.is_folder_on(&self.head).then(|| {
                let r = t.render(&self.head, engines);
                (t.clone(), r)
            });
            work.push((Some(t), head));
        }
        let mut diffs: Vec<TargetDiff> = work
            .into_par_iter()
            .map(|(base, head)| {
                let before = match &base {
                    Some(t) => t.render(&self.base, engines).rendering,
                    None => Rendering::Absent,
                };
                let (target, after) = match head {
                    Some((t, r)) => (t, r.rendering),
                    None => (
                        base.expect("a target is on one side at least"),
                        Rendering::Absent,
                    ),
                };
                compare(
                    &target.name,
                    target.kind.name(),
                    &before,
                    &after,
                    show_secrets,
                )
            })
            .collect();
        diffs.retain(TargetDiff::changed);
        diffs.sort_by(|a, b| (a.kind, &a.target).cmp(&(b.kind, &b.target)));
        Ok((diffs, total))
    }
}
