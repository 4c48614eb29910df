//! `krusty targets` and `krusty diff`: a repository's targets, those a
//! change touches, and what it does to each.

use std::path::PathBuf;
use std::process::ExitCode;

use krusty_api::{Engine, KustomizeVersion, Options as BuildOptions};
use krusty_gitops::affected::Comparison;
use krusty_gitops::argocd::{Application, Settings as ArgoSettings, Tracking};
use krusty_gitops::diff::{self, Format};
use krusty_gitops::flux::{FluxKustomization, Settings as FluxSettings};
use krusty_gitops::git::Tree;
use krusty_gitops::target::{Engines, Side, TargetKind};

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
    /// REV and the work tree (or, as REV..REV2, between two revisions; as
    /// REV...REV2, from their merge base to REV2).
    #[arg(long = "affected-by", value_name = "REV[..REV2]")]
    affected_by: Option<String>,
}

/// `krusty flux build`.
#[derive(clap::Args)]
pub struct FluxBuildArgs {
    /// Files holding Flux Kustomization objects (defaults to every one
    /// found in the repository whose spec.path is a folder in it).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The source root spec.path is read from (defaults to the top of the
    /// git work tree holding the current folder).
    #[arg(long = "source-root", value_name = "DIR")]
    source_root: Option<PathBuf>,
    /// Render only the Kustomizations of this name (`NAME` or
    /// `NAMESPACE/NAME`); may be given more than once.
    #[arg(long = "kustomization", short = 'k', value_name = "NAME")]
    only: Vec<String>,
    #[command(flatten)]
    flux: FluxArgs,
}

/// `krusty argocd build`.
#[derive(clap::Args)]
pub struct ArgoBuildArgs {
    /// Files holding Application objects (defaults to every one found in
    /// the repository whose Kustomize source is in it).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The repository's top folder (defaults to the top of the git work
    /// tree holding the current folder).
    #[arg(long = "repo-root", value_name = "DIR")]
    repo_root: Option<PathBuf>,
    #[command(flatten)]
    argo: ArgoArgs,
}

/// `krusty diff`.
#[derive(clap::Args)]
pub struct DiffArgs {
    /// The git revision to compare from (or a range, BASE..HEAD, or
    /// BASE...HEAD to compare from their merge base).
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
    #[command(flatten)]
    flux: FluxArgs,
    #[command(flatten)]
    argo: ArgoArgs,
}

/// How Argo CD Applications render: argocd-cm's settings.
#[derive(clap::Args, Clone)]
pub struct ArgoArgs {
    /// argocd-cm's `kustomize.buildOptions`: flags added to every
    /// Application's `kustomize build` (--load-restrictor, --enable-helm,
    /// --helm-command).
    #[arg(
        long = "argocd-build-options",
        value_name = "FLAGS",
        default_value = ""
    )]
    build_options: String,
    /// argocd-cm's `application.resourceTrackingMethod`: annotation (the
    /// default), label, annotation+label, or none (objects as `kustomize
    /// build` prints them).
    #[arg(
        long = "argocd-tracking",
        value_name = "METHOD",
        default_value = "annotation"
    )]
    tracking: Tracking,
    /// The namespace Argo CD runs in: Applications elsewhere name their
    /// objects `namespace_name`.
    #[arg(
        long = "argocd-namespace",
        value_name = "NAMESPACE",
        default_value = "argocd"
    )]
    control_plane_namespace: String,
}

impl ArgoArgs {
    /// The settings Applications render with.
    fn settings(&self, version: KustomizeVersion) -> Result<ArgoSettings, String> {
        let mut options = BuildOptions {
            kustomize_version: version,
            ..BuildOptions::default()
        };
        let mut words = self.build_options.split_whitespace();
        while let Some(word) = words.next() {
            let (flag, inline) = match word.split_once('=') {
                Some((flag, value)) => (flag, Some(value.to_string())),
                None => (word, None),
            };
            let mut value = |name: &str| {
                inline
                    .clone()
                    .or_else(|| words.next().map(str::to_string))
                    .ok_or_else(|| format!("--argocd-build-options: {name} needs a value"))
            };
            match flag {
                "--load-restrictor" => {
                    options.load_restrictor = value(flag)?.parse()?;
                }
                "--enable-helm" => options.helm.enabled = inline.as_deref() != Some("false"),
                "--helm-command" => options.helm.command = value(flag)?,
                other => {
                    return Err(format!(
                        "--argocd-build-options: krusty does not take '{other}' here (it takes --load-restrictor, --enable-helm and --helm-command)"
                    ))
                }
            }
        }
        Ok(ArgoSettings {
            engine: Engine::new(options),
            tracking: self.tracking,
            control_plane_namespace: self.control_plane_namespace.clone(),
        })
    }
}

/// How Flux Kustomizations render: kustomize-controller's flags.
#[derive(clap::Args, Clone, Default)]
pub struct FluxArgs {
    /// Refuse remote bases, as kustomize-controller's --no-remote-bases
    /// does (files named by URL are still read).
    #[arg(long = "no-remote-bases")]
    no_remote_bases: bool,
    /// Fail on a `${VAR}` with no value, as kustomize-controller does by
    /// default (its StrictPostBuildSubstitutions feature gate); false
    /// substitutes nothing for it.
    #[arg(long = "strict-substitute", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = true, value_name = "BOOL")]
    strict_substitute: bool,
    /// Files holding ConfigMaps and Secrets `postBuild.substituteFrom`
    /// may name, besides those in the repository.
    #[arg(long = "substitute-from", value_name = "FILE")]
    substitute_from: Vec<PathBuf>,
}

impl FluxArgs {
    /// The settings Flux Kustomizations render with.
    fn settings(&self, version: KustomizeVersion) -> Result<FluxSettings, String> {
        let mut extra = Vec::new();
        for file in &self.substitute_from {
            for kind in ["ConfigMap", "Secret"] {
                extra.extend(
                    krusty_gitops::object::read_file(file, file, "", kind)
                        .map_err(|e| e.to_string())?,
                );
            }
        }
        Ok(FluxSettings {
            engine: Engine::new(FluxSettings::engine_options(version, self.no_remote_bases)),
            strict: self.strict_substitute,
            extra_objects: extra,
        })
    }
}

/// The engines targets render with.
fn engines(version: KustomizeVersion, flux: &FluxArgs, argo: &ArgoArgs) -> Result<Engines, String> {
    Ok(Engines {
        kustomize: Engine::new(BuildOptions {
            kustomize_version: version,
            ..BuildOptions::default()
        }),
        flux: flux.settings(version)?,
        argocd: argo.settings(version)?,
    })
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
            let comparison =
                Comparison::new(&args.dir, revs, &Tree::WorkTree).map_err(|e| e.to_string())?;
            comparison
                .affected(&engines(
                    version,
                    &FluxArgs::default(),
                    &ArgoArgs::default(),
                )?)
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
    let engines = match engines(version, &args.flux, &args.argo) {
        Ok(engines) => engines,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::from(2);
        }
    };
    let result = Comparison::new(&args.dir, &args.base, &head)
        .and_then(|c| c.diff(&engines, args.show_secrets));
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

impl Default for ArgoArgs {
    fn default() -> ArgoArgs {
        ArgoArgs {
            build_options: String::new(),
            tracking: Tracking::default(),
            control_plane_namespace: "argocd".into(),
        }
    }
}

/// The side a command renders the work tree as: the repository's top
/// folder (`root`, else the git work tree's), with the commit it was
/// checked out from.
fn work_tree(root: Option<&PathBuf>) -> Result<Side, String> {
    let here = std::path::Path::new(".");
    let repo = krusty_gitops::git::Repo::containing(root.map_or(here, |r| r.as_path()));
    let top = match (root, &repo) {
        (Some(root), _) => {
            std::fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?
        }
        (None, Ok(repo)) => repo.top.clone(),
        (None, Err(e)) => return Err(format!("{e} (name the repository with --repo-root)")),
    };
    let revision = repo
        .ok()
        .and_then(|r| r.commit("HEAD").ok())
        .unwrap_or_default();
    Ok(Side::new(top, PathBuf::new(), revision))
}

/// The objects of `files` (relative to the current folder), or every one
/// under the side's top, of `group` and `kind`.
fn objects(
    side: &Side,
    files: &[PathBuf],
    group: &str,
    kind: &str,
) -> Result<Vec<krusty_gitops::object::Found>, String> {
    if files.is_empty() {
        return krusty_gitops::object::find_all(&side.top, group, kind).map_err(|e| e.to_string());
    }
    let mut found = Vec::new();
    for file in files {
        let path = std::fs::canonicalize(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let shown = path
            .strip_prefix(&side.top)
            .map(PathBuf::from)
            .unwrap_or(path.clone());
        let objects = krusty_gitops::object::read_file(&path, &shown, group, kind)
            .map_err(|e| e.to_string())?;
        if objects.is_empty() {
            return Err(format!("{}: holds no {kind} of {group}", file.display()));
        }
        found.extend(objects);
    }
    Ok(found)
}

/// Prints the objects of every rendering, one YAML stream.
fn print_renderings(renderings: Vec<krusty_gitops::diff::Rendering>) -> Result<(), String> {
    let mut all = Vec::new();
    for rendering in renderings {
        match rendering {
            krusty_gitops::diff::Rendering::Objects(objects) => all.extend(objects),
            krusty_gitops::diff::Rendering::Failed(e) => return Err(e),
            krusty_gitops::diff::Rendering::Absent => {}
        }
    }
    let stream = krusty_api::Stream::render(&all).map_err(|e| e.to_string())?;
    crate::output::write_stdout(&stream)
}

/// Runs `krusty argocd build`.
pub fn argocd_build(args: &ArgoBuildArgs, version: KustomizeVersion) -> Result<(), String> {
    let side = work_tree(args.repo_root.as_ref())?;
    let settings = args.argo.settings(version)?;
    let mut apps = Vec::new();
    for found in objects(
        &side,
        &args.files,
        krusty_gitops::argocd::GROUP,
        "Application",
    )? {
        let app = Application::read(&found).map_err(|e| e.to_string())?;
        if args.files.is_empty() && !app.renders_here(&side) {
            eprintln!(
                "Skipping Application {} ({}): no Kustomize source in this repository",
                app.shown_name(),
                app.file.display()
            );
            continue;
        }
        apps.push(app);
    }
    use rayon::prelude::*;
    let renderings = apps
        .par_iter()
        .map(|app| app.render(&side, &settings).rendering)
        .collect();
    print_renderings(renderings)
}

/// Runs `krusty flux build`: each Kustomization after those it depends
/// on, their objects one stream.
pub fn flux_build(args: &FluxBuildArgs, version: KustomizeVersion) -> Result<(), String> {
    let side = work_tree(args.source_root.as_ref())?;
    let settings = args.flux.settings(version)?;
    let mut list = Vec::new();
    for found in objects(
        &side,
        &args.files,
        krusty_gitops::flux::GROUP,
        "Kustomization",
    )? {
        let ks = FluxKustomization::read(&found).map_err(|e| e.to_string())?;
        if !args.only.is_empty() && !args.only.iter().any(|n| *n == ks.name || *n == ks.key()) {
            continue;
        }
        if args.files.is_empty() && !ks.renders_here(&side) {
            eprintln!(
                "Skipping Kustomization {} ({}): spec.path '{}' is not a folder of this source",
                ks.key(),
                ks.file.display(),
                ks.path
            );
            continue;
        }
        list.push(ks);
    }
    if list.is_empty() {
        return Err("no Flux Kustomization to render".into());
    }
    let list = krusty_gitops::flux::in_dependency_order(list).map_err(|e| e.to_string())?;
    use rayon::prelude::*;
    let renderings = list
        .par_iter()
        .map(|ks| ks.render(&side, &settings).rendering)
        .collect();
    print_renderings(renderings)
}
