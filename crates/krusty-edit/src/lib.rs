//! `kustomize edit` and `kustomize create` for krusty: commands that change
//! a kustomization file and keep what a person wrote in it.
//!
//! Each command checks its arguments first, then opens the kustomization
//! file of a directory ([`KustomizationFile::find`]), changes the fields it
//! is about and writes the file back: untouched fields keep their text
//! byte for byte, changed fields keep the comments and styles inside them,
//! new fields go after the others in the order Kustomize's writer uses.
//! Messages are Kustomize's. A command returns the notes Kustomize logs
//! (an entry already present, a pattern without matches) for the caller
//! to print.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # std::fs::write(dir.path().join("kustomization.yaml"), "# app\nresources:\n- deploy.yaml\n").unwrap();
//! krusty_edit::set_images(dir.path(), &["nginx=registry.local/nginx:1.27".to_string()]).unwrap();
//! let text = std::fs::read_to_string(dir.path().join("kustomization.yaml")).unwrap();
//! assert!(text.starts_with("# app\nresources:\n- deploy.yaml\n"));
//! assert!(text.contains("images:\n- name: nginx\n  newName: registry.local/nginx\n  newTag: \"1.27\"\n"));
//! ```

pub mod buildmeta;
pub mod checks;
pub mod create;
pub mod error;
pub mod file;
pub mod fix;
pub mod generator;
pub mod glob;
pub mod image;
mod lines;
pub mod metadata;
mod node;
mod open;
pub mod patch;
pub mod paths;
pub mod replace;
pub mod replicas;
pub mod scalar;
pub mod vars;

use std::path::Path;

pub use checks::{CheckError, Checks};
pub use create::CreateArgs;
pub use error::{EditError, EditResult};
pub use file::KustomizationFile;
pub use generator::{add as add_generated, remove as remove_generated, set as set_generated};
pub use metadata::{AddFlags, Kind};
pub use patch::PatchArg;
pub use paths::PathList;
pub use scalar::ScalarField;

/// Notes for stderr (what Kustomize logs without failing).
pub type Notes = Vec<String>;

/// Opens the kustomization file of `dir`, lets `change` edit it, and writes
/// it back (with `apiVersion` and `kind` added where missing, as Kustomize
/// does) unless `change` says there is nothing to write.
pub fn edit_file(
    dir: &Path,
    change: impl FnOnce(&mut KustomizationFile, &mut Notes) -> EditResult<bool>,
) -> EditResult<Notes> {
    let mut k = KustomizationFile::find(dir)?;
    let mut notes = Notes::new();
    if change(&mut k, &mut notes)? {
        k.complete_type_meta();
        k.save()?;
    }
    Ok(notes)
}

/// `edit set nameprefix|namesuffix|namespace VALUE`.
pub fn set_scalar(dir: &Path, field: ScalarField, args: &[String]) -> EditResult<Notes> {
    let value = scalar::parse_value(field, args)?;
    edit_file(dir, |k, _| {
        scalar::set(k, field, &value);
        Ok(true)
    })
}

/// `edit set image IMAGE...`.
pub fn set_images(dir: &Path, args: &[String]) -> EditResult<Notes> {
    let images = image::parse_args(args)?;
    edit_file(dir, |k, _| {
        image::set(k, &images);
        Ok(true)
    })
}

/// `edit set replicas NAME=COUNT...`.
pub fn set_replicas(dir: &Path, args: &[String]) -> EditResult<Notes> {
    let counts = replicas::parse_args(args)?;
    edit_file(dir, |k, _| {
        replicas::set(k, &counts);
        Ok(true)
    })
}

/// `edit add label|annotation KEY:VALUE...`.
pub fn add_metadata(dir: &Path, kind: Kind, args: &[String], flags: AddFlags) -> EditResult<Notes> {
    let pairs = metadata::check_add(args, kind, flags)?;
    edit_file(dir, |k, _| {
        metadata::add(k, kind, &pairs, flags).map(|()| true)
    })
}

/// `edit set label|annotation KEY:VALUE...`.
pub fn set_metadata(dir: &Path, kind: Kind, args: &[String]) -> EditResult<Notes> {
    if args.is_empty() {
        return Err(EditError::new(format!("must specify {}", kind.word())));
    }
    let pairs = metadata::parse_pairs(args, kind)?;
    if kind == Kind::Annotation {
        metadata::check_annotation_keys(&pairs)?;
    }
    edit_file(dir, |k, _| {
        metadata::set(k, kind, &pairs);
        Ok(true)
    })
}

/// `edit remove label|annotation KEY[,KEY...]`.
pub fn remove_metadata(dir: &Path, kind: Kind, args: &[String], ignore: bool) -> EditResult<Notes> {
    let keys = metadata::parse_keys(args)?;
    edit_file(dir, |k, _| {
        metadata::remove(k, kind, &keys, ignore).map(|()| true)
    })
}

/// `edit add resource|component PATTERN...` (`verify: false` for
/// `--no-verify`).
pub fn add_paths(
    dir: &Path,
    list: PathList,
    args: &[String],
    verify: bool,
    checks: &dyn Checks,
) -> EditResult<Notes> {
    if args.is_empty() {
        return Err(EditError::new(match list {
            PathList::Resources => "must specify a resource file",
            PathList::Components => "must specify a component file",
            PathList::Generators => {
                "must specify a yaml file which contains a generator plugin resource"
            }
            PathList::Transformers => {
                "must specify a yaml file which contains a transformer plugin resource"
            }
        }));
    }
    let mut notes = Notes::new();
    let paths = match list {
        PathList::Resources | PathList::Components => {
            paths::expand_checked(dir, args, verify, checks)?
        }
        PathList::Generators | PathList::Transformers => paths::expand(dir, args, &mut notes)?,
    };
    if paths.is_empty() {
        return Ok(notes);
    }
    let more = edit_file(dir, |k, notes| {
        paths::add(k, list, &paths, notes);
        Ok(true)
    })?;
    notes.extend(more);
    Ok(notes)
}

/// `edit add base DIR[,DIR...]`.
pub fn add_bases(dir: &Path, args: &[String]) -> EditResult<Notes> {
    let [arg] = args else {
        return Err(EditError::new("must specify a base directory"));
    };
    edit_file(dir, |k, _| paths::add_bases(dir, k, arg).map(|()| true))
}

/// `edit remove resource|component|transformer PATTERN...`.
pub fn remove_paths(dir: &Path, list: PathList, args: &[String]) -> EditResult<Notes> {
    if args.is_empty() {
        return Err(EditError::new(format!(
            "must specify a {} file",
            list.word()
        )));
    }
    edit_file(dir, |k, _| paths::remove(k, list.field(), args))
}

/// `edit add patch --path|--patch ... [target flags]`.
pub fn add_patch(dir: &Path, arg: &PatchArg) -> EditResult<Notes> {
    patch::check_add(arg)?;
    edit_file(dir, |k, notes| Ok(patch::add(k, arg, notes)))
}

/// `edit remove patch --path|--patch ... [target flags]`.
pub fn remove_patch(dir: &Path, arg: &PatchArg) -> EditResult<Notes> {
    patch::check_remove(arg)?;
    edit_file(dir, |k, notes| Ok(patch::remove(k, arg, notes)))
}

/// Which `buildmetadata` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildMetadataEdit {
    /// `edit add buildmetadata`.
    Add,
    /// `edit set buildmetadata`.
    Set,
    /// `edit remove buildmetadata`.
    Remove,
}

/// `edit add|set|remove buildmetadata OPTION[,OPTION...]`.
pub fn edit_build_metadata(
    dir: &Path,
    op: BuildMetadataEdit,
    args: &[String],
) -> EditResult<Notes> {
    let options = buildmeta::parse_args(args)?;
    edit_file(dir, |k, _| {
        match op {
            BuildMetadataEdit::Add => buildmeta::add(k, &options)?,
            BuildMetadataEdit::Set => buildmeta::set(k, &options),
            BuildMetadataEdit::Remove => buildmeta::remove(k, &options),
        }
        Ok(true)
    })
}

/// `edit fix`: rewrites the deprecated fields (see [`fix`](mod@fix)), and
/// with `vars` turns `vars` into `replacements` (see [`vars`](mod@vars));
/// returns Kustomize's report for stdout: the fields rewritten, and a
/// warning when the target no longer builds, or builds differently, than
/// before.
pub fn fix_file(dir: &Path, vars: bool, checks: &dyn Checks) -> EditResult<Notes> {
    let mut before = String::new();
    let mut rewrites = vars::Rewrites::default();
    edit_file(dir, |k, _| {
        // Built once the file is open: a kustomization file that is not
        // a regular file has been refused. A target that did not build
        // counts as an empty output, as in Kustomize.
        before = checks.build(dir).unwrap_or_default();
        fix::fix(dir, k)?;
        if vars {
            rewrites = vars::to_replacements(dir, k)?;
        }
        Ok(true)
    })?;
    // The rewritten files go in place once the kustomization is: what
    // they would lose to a failed write is a `$(NAME)` the replacement
    // overwrites anyway.
    rewrites.commit()?;
    let mut report = vec![
        String::new(),
        "Fixed fields:".to_string(),
        "  patchesJson6902 -> patches".to_string(),
        "  patchesStrategicMerge -> patches".to_string(),
        "  commonLabels -> labels".to_string(),
    ];
    if vars {
        report.push("  vars -> replacements".to_string());
    } else {
        report.extend(
            [
                "",
                "To convert vars -> replacements, run the command `kustomize edit fix --vars`",
                "",
                "WARNING: Converting vars to replacements will potentially overwrite many resource files ",
                "and the resulting files may not produce the same output when `kustomize build` is run. ",
                "We recommend doing this in a clean git repository where the change is easy to undo.",
            ]
            .map(String::from),
        );
    }
    match checks.build(dir) {
        Err(e) => report.push(format!(
            "Warning: 'Fixed' kustomization now produces the error when running `kustomize build`: {e}"
        )),
        Ok(after) if after != before => report.push(format!(
            "Warning: 'Fixed' kustomization now produces different output when running `kustomize build`:\n...{after}..."
        )),
        Ok(_) => {}
    }
    Ok(report)
}

/// `create`: a new kustomization file in `dir`.
pub fn create_file(dir: &Path, args: &CreateArgs, checks: &dyn Checks) -> EditResult<Notes> {
    create::create(dir, args, checks).map(|_| Notes::new())
}
