//! A target, and its rendering on one side of a change.
//!
//! A target is a kustomization folder nothing else reaches, a Flux
//! `Kustomization` or an Argo CD `Application`. Each renders through one
//! engine per kind (their build options differ: Flux loads without
//! restriction and runs no plugins; Argo CD builds as `kustomize build`
//! does, with the build options the user gives) and records the files it
//! read, which decide whether a change can touch it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use krusty_api::{BaseCache, BuildRequest, Engine, Inputs};

use crate::diff::Rendering;
use crate::error::Result;
use crate::flux::ObjectIndex;

/// One side of a change: a folder holding the repository's files at one
/// revision (or the work tree itself).
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// The repository's top folder on this side, with symlinks resolved.
    pub top: PathBuf,
    /// The folder searched for targets, relative to `top` (empty: `top`).
    pub dir: PathBuf,
    /// The commit this side holds (for the work tree, the commit it was
    /// checked out from; empty when there is none).
    pub revision: String,
    /// Its ConfigMaps and Secrets, read when first asked for.
    objects: Arc<OnceLock<ObjectIndex>>,
    /// The bases its targets have built: each shared base is built once
    /// per side (the side's files do not change while it is rendered).
    bases: Arc<BaseCache>,
    /// The first symlink of the tree that is absolute or leads out of it,
    /// looked for when first asked.
    escaping_link: Arc<OnceLock<Option<PathBuf>>>,
}

impl Side {
    /// The side whose top folder is `top`, searched from `dir`, holding
    /// `revision`.
    pub fn new(top: PathBuf, dir: PathBuf, revision: String) -> Side {
        Side {
            top,
            dir,
            revision,
            objects: Arc::default(),
            bases: Arc::default(),
            escaping_link: Arc::default(),
        }
    }

    /// The ConfigMaps and Secrets of the side's files (those a Flux
    /// `substituteFrom` names); a tree that cannot be read holds none.
    pub fn objects(&self) -> &ObjectIndex {
        self.objects
            .get_or_init(|| ObjectIndex::of(&self.top).unwrap_or_default())
    }

    /// The folder searched for targets.
    pub fn searched(&self) -> PathBuf {
        self.top.join(&self.dir)
    }

    /// The first symlink of the tree (relative to its top, `.git` left
    /// out, in path order) that is absolute or leads out of the tree: Argo
    /// CD refuses to render from such a repository.
    pub fn escaping_link(&self) -> Option<&Path> {
        self.escaping_link
            .get_or_init(|| first_escaping_link(&self.top, Path::new("")))
            .as_deref()
    }

    /// `text` with this side's top folder written as a path relative to
    /// it, so the same error on two sides reads the same.
    pub fn relative_text(&self, text: &str) -> String {
        let top = self.top.display().to_string();
        text.replace(&format!("{top}/"), "").replace(&top, ".")
    }
}

fn first_escaping_link(top: &Path, rel: &Path) -> Option<PathBuf> {
    let dir = top.join(rel);
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(&dir).ok()?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if rel.as_os_str().is_empty() && name == ".git" {
            continue;
        }
        let path = rel.join(&name);
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            let target = std::fs::read_link(entry.path()).ok()?;
            let lexical = crate::discover::clean(&rel.join(&target));
            let escapes = target.is_absolute() || lexical.starts_with("..");
            let resolved_out =
                std::fs::canonicalize(entry.path()).is_ok_and(|r| !r.starts_with(top));
            if escapes || resolved_out {
                return Some(path);
            }
        } else if kind.is_dir() {
            if let Some(found) = first_escaping_link(top, &path) {
                return Some(found);
            }
        }
    }
    None
}

/// What kind of target a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKind {
    /// A kustomization folder.
    Kustomization,
    /// A Flux `Kustomization` object.
    Flux,
    /// An Argo CD `Application`.
    ArgoCd,
}

impl TargetKind {
    /// Its name, as printed.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Kustomization => "kustomization",
            TargetKind::Flux => "flux",
            TargetKind::ArgoCd => "argocd",
        }
    }
}

/// The engines targets render with, one per kind of target.
#[derive(Debug)]
pub struct Engines {
    /// For kustomization folders: `kustomize build`'s options.
    pub kustomize: Engine,
    /// For Flux Kustomizations.
    pub flux: crate::flux::Settings,
    /// For Argo CD Applications.
    pub argocd: crate::argocd::Settings,
}

/// A target found on one side.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its name: the folder relative to the searched one, or the
    /// object's `namespace/name`.
    pub name: String,
    /// What kind of target it is.
    pub kind: TargetKind,
    source: Source,
}

/// What a target renders.
#[derive(Debug, Clone)]
enum Source {
    /// The kustomization folder, relative to the side's top.
    Folder(PathBuf),
    /// A Flux Kustomization.
    Flux(Box<crate::flux::FluxKustomization>),
    /// An Argo CD Application.
    ArgoCd(Box<crate::argocd::Application>),
}

/// A target rendered on one side: its objects (or error), and the files
/// the rendering read, relative to the side's top.
#[derive(Debug)]
pub struct Rendered {
    /// The objects, or why the target failed.
    pub rendering: Rendering,
    /// What it read.
    pub inputs: Inputs,
}

impl Target {
    /// The kustomization folder `dir` (relative to the side's searched
    /// folder) as a target.
    pub fn folder(side: &Side, dir: &Path) -> Target {
        Target {
            name: dir.display().to_string(),
            kind: TargetKind::Kustomization,
            source: Source::Folder(crate::discover::clean(&side.dir.join(dir))),
        }
    }

    /// A Flux Kustomization as a target.
    pub fn flux(ks: crate::flux::FluxKustomization) -> Target {
        Target {
            name: format!("{} ({})", ks.key(), ks.file.display()),
            kind: TargetKind::Flux,
            source: Source::Flux(Box::new(ks)),
        }
    }

    /// An Argo CD Application as a target.
    pub fn argocd(app: crate::argocd::Application) -> Target {
        Target {
            name: format!("{} ({})", app.shown_name(), app.file.display()),
            kind: TargetKind::ArgoCd,
            source: Source::ArgoCd(Box::new(app)),
        }
    }

    /// Whether it is a kustomization folder that still holds a
    /// kustomization on `side` (a target of another side that became a
    /// base there).
    pub fn is_folder_on(&self, side: &Side) -> bool {
        match &self.source {
            Source::Folder(dir) => crate::discover::KUSTOMIZATION_FILES
                .iter()
                .any(|n| side.top.join(dir).join(n).is_file()),
            _ => false,
        }
    }

    /// Renders it on `side`.
    pub fn render(&self, side: &Side, engines: &Engines) -> Rendered {
        match &self.source {
            Source::Folder(dir) => {
                render_folder(side, &engines.kustomize, dir, &BuildRequest::default())
            }
            Source::Flux(ks) => ks.render(side, &engines.flux),
            Source::ArgoCd(app) => app.render(side, &engines.argocd),
        }
    }
}

/// Builds the folder `dir` of `side` with `engine`, recording its inputs.
pub(crate) fn render_folder(
    side: &Side,
    engine: &Engine,
    dir: &Path,
    request: &BuildRequest,
) -> Rendered {
    let request = BuildRequest {
        record_inputs: true,
        base_cache: Some(Arc::clone(&side.bases)),
        ..request.clone()
    };
    let (built, inputs) = engine.build_with(side.top.join(dir), &request);
    let rendering = match built {
        Ok(build) => Rendering::Objects(build.into_resources()),
        Err(e) => Rendering::Failed(side.relative_text(&e.to_string())),
    };
    Rendered {
        rendering,
        inputs: inputs.relative_to(&side.top),
    }
}

/// Every target on `side`: kustomization folders, then Flux
/// Kustomizations and Argo CD Applications whose folders are in the
/// repository; each kind in name order (one walk of the tree finds both).
/// An object that cannot be read fails the discovery, naming its file.
pub fn discover(side: &Side) -> Result<Vec<Target>> {
    if !side.searched().is_dir() {
        // The folder searched is not in this revision: it has no targets.
        return Ok(Vec::new());
    }
    let folders = crate::discover::targets(&side.searched())?;
    let mut targets: Vec<Target> = folders.iter().map(|d| Target::folder(side, d)).collect();
    let kinds = [
        (crate::flux::GROUP, "Kustomization"),
        (crate::argocd::GROUP, "Application"),
    ];
    let mut found = crate::object::find_kinds(&side.searched(), &kinds)?.into_iter();
    let in_side = |f: crate::object::Found| crate::object::Found {
        file: side.dir.join(&f.file),
        ..f
    };
    let mut kustomizations = Vec::new();
    for f in found.next().unwrap_or_default() {
        let ks = crate::flux::FluxKustomization::read(&in_side(f))?;
        if ks.renders_here(side) {
            kustomizations.push(Target::flux(ks));
        }
    }
    kustomizations.sort_by(|a, b| a.name.cmp(&b.name));
    targets.extend(kustomizations);
    let mut apps = Vec::new();
    for f in found.next().unwrap_or_default() {
        let app = crate::argocd::Application::read(&in_side(f))?;
        if app.renders_here(side) {
            apps.push(Target::argocd(app));
        }
    }
    apps.sort_by(|a, b| a.name.cmp(&b.name));
    targets.extend(apps);
    Ok(targets)
}
