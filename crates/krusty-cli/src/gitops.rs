//! `krusty targets` and `krusty diff`: a repository's targets, those a
//! change touches, and what it does to each.

use std::path::PathBuf;
use std::process::ExitCode;

use krusty_api::{Engine, KustomizeVersion, Options as BuildOptions};
use krusty_gitops::affected::Comparison;
use krusty_gitops::diff::{self, Format};
use krusty_gitops::git::Tree;
use krusty_gitops::target::{Engines, TargetKind};

/// `krusty targets`.
#[derive(clap::Args)]
pub struct TargetsArgs {
    /// The folder to search (defaults to the current one).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Print a JSON array of paths instead of one path a line.
    #[arg(long = "json")]
    json: bool,
    /// List only the targets whose inputs differ between the git revision
    /// REV and the work tree (or, as REV..REV2, between two revisions).
    #[arg(long = "affected-by", value_name = "REV[..REV2]")]
    affected_by: Option<String>,
}

/// `krusty diff`.
#[derive(clap::Args)]
pub struct DiffArgs {
    /// The git revision to compare from.
    #[arg(value_name = "BASE")]
    base: String,
    /// The git revision to compare to (defaults to the work tree).
    #[arg(value_name = "HEAD")]
    head: Option<String>,
    /// The folder of the repository whose targets are compared (defaults
    /// to the current one).
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// How to print the diff: text, markdown (a pull-request comment) or
    /// json.
    #[arg(
        long = "output",
        short = 'o',
        value_name = "FORMAT",
        default_value = "text"
    )]
    output: Format,
    /// Print Secret values instead of masking them.
    #[arg(long = "show-secrets")]
    show_secrets: bool,
}

/// The engines targets render with.
fn engines(version: KustomizeVersion) -> Engines {
    Engines {
        kustomize: Engine::new(BuildOptions {
            kustomize_version: version,
            ..BuildOptions::default()
        }),
    }
}

/// `REV` (against the work tree) or `REV..REV2`.
fn range(text: &str) -> (String, Tree) {
    match text.split_once("..") {
        Some((base, head)) if !head.is_empty() => {
            (base.to_string(), Tree::Commit(head.to_string()))
        }
        Some((base, _)) => (base.to_string(), Tree::WorkTree),
        None => (text.to_string(), Tree::WorkTree),
    }
}

/// Runs `krusty targets`.
pub fn targets(args: &TargetsArgs, version: KustomizeVersion) -> Result<(), String> {
    let listed: Vec<String> = match &args.affected_by {
        None => krusty_gitops::discover::targets(&args.dir)
            .map_err(|e| e.to_string())?
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        Some(revs) => {
            let (base, head) = range(revs);
            let comparison = Comparison::new(&args.dir, &base, &head).map_err(|e| e.to_string())?;
            comparison
                .affected(&engines(version))
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|(t, _)| t.kind == TargetKind::Kustomization)
                .map(|(t, _)| t.name)
                .collect()
        }
    };
    let mut out = String::new();
    if args.json {
        out = serde_json::to_string(&listed).map_err(|e| e.to_string())?;
        out.push('\n');
    } else {
        for path in listed {
            out.push_str(&path);
            out.push('\n');
        }
    }
    crate::output::write_stdout_text(&out)
}

/// Runs `krusty diff`: status 1 when anything changed, 0 when nothing
/// did, 2 when the comparison could not be made.
pub fn diff(args: &DiffArgs, version: KustomizeVersion) -> ExitCode {
    let head = args.head.clone().map_or(Tree::WorkTree, Tree::Commit);
    let result = Comparison::new(&args.dir, &args.base, &head)
        .and_then(|c| c.diff(&engines(version), args.show_secrets));
    match result {
        Ok((diffs, total)) => {
            let text = diff::print(&diffs, total, args.output);
            if let Err(e) = crate::output::write_stdout_text(&text) {
                eprintln!("Error: {e}");
                return ExitCode::from(2);
            }
            if diffs.iter().any(|d| d.changed()) {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::from(2)
        }
    }
}
