//! The `krusty` command line: a drop-in for the `kustomize` program
//! (`build`, `edit`, `version`), also when installed or linked under the
//! name `kustomize`.

mod compare;
mod edit;
mod examples;
mod gitops;
mod manual;
mod output;
mod pool;
mod targets;
mod version;
mod view;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use krusty_api::{
    composition, BuildRequest, Cache, Engine, FetchOptions, HelmOptions, KustomizeVersion,
    LoadRestrictor, Mount, Options as BuildOptions, Policy, TimedStage, Timings,
};

/// krusty: a fast, Kustomize-compatible engine for Kubernetes configuration.
#[derive(Parser)]
#[command(name = "krusty", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The Kustomize release to reproduce: v5.8.1 (the default) or
    /// v5.5.0. The environment variable serves tools that run
    /// `kustomize` with fixed arguments (Argo CD); the flag wins.
    #[arg(
        long = "kustomize-version",
        global = true,
        env = "KRUSTY_KUSTOMIZE_VERSION",
        value_name = "VERSION",
        default_value_t = KustomizeVersion::default()
    )]
    kustomize_version: KustomizeVersion,
}

#[derive(Subcommand)]
enum Command {
    /// Build a kustomization target from a directory.
    ///
    /// Prints the resources of DIR/kustomization.yaml (and everything it
    /// includes) to stdout, exactly as `kustomize build` does.
    Build(Box<BuildArgs>),
    /// Edits the kustomization file of the current directory, as
    /// `kustomize edit` does.
    #[command(subcommand)]
    Edit(edit::EditCommand),
    /// Creates a new kustomization in the current directory, as
    /// `kustomize create` does.
    #[command(visible_alias = "init")]
    Create(edit::CreateArgs),
    /// Prints the Kustomize version krusty is compatible with, then
    /// krusty's own.
    Version(version::VersionArgs),
    /// Shows or empties the cache of remote repositories and files.
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Works with compositions (KEP-2299).
    #[command(subcommand)]
    Composition(CompositionCommand),
    /// Shows what a function catalog holds (KEP-2906).
    #[command(subcommand)]
    View(view::ViewCommand),
    /// Lists the targets under DIR: the folders holding a kustomization
    /// (or composition) that no other kustomization in the tree reaches.
    ///
    /// With --affected-by, only those whose inputs (every file their build
    /// reads) differ between a git revision and the work tree.
    Targets(gitops::TargetsArgs),
    /// Shows what a change does to every target it touches, object by
    /// object.
    ///
    /// Renders every target of the repository (kustomization folders,
    /// Flux Kustomizations, Argo CD Applications) whose inputs differ
    /// between the git revisions BASE and HEAD (the work tree when
    /// omitted), read from git objects, and prints the objects added,
    /// removed and changed, with a unified diff of each. Exit status: 0
    /// when nothing changed, 1 when something did, 2 on error.
    Diff(gitops::DiffArgs),
    /// Renders Argo CD Applications as Argo CD's repo-server does.
    #[command(subcommand)]
    Argocd(ArgoCommand),
    /// Renders Flux Kustomizations as kustomize-controller does.
    #[command(subcommand)]
    Flux(FluxCommand),
    /// Prints the completion script of a shell (bash, zsh, fish,
    /// powershell, elvish) for krusty's commands and flags.
    Completion(manual::CompletionArgs),
    /// Prints krusty's manual page (roff), or writes one page per
    /// subcommand into a folder.
    Man(manual::ManArgs),
    /// Copies krusty (and krusty-starlark) into a folder, optionally
    /// named `kustomize`: how an image with no shell hands its programs
    /// to another container (docs/install.md).
    Install(manual::InstallArgs),
}

#[derive(Subcommand)]
enum FluxCommand {
    /// Renders Flux Kustomization objects (kustomize.toolkit.fluxcd.io/v1)
    /// from the git repository they live in, without a cluster: spec.path
    /// from the source root, the kustomization Flux generates or merges
    /// (never written into the tree), postBuild substitution from the
    /// ConfigMaps and Secrets in the repository, and the labels Flux adds.
    /// Several render after those they depend on.
    Build(gitops::FluxBuildArgs),
}

#[derive(Subcommand)]
enum ArgoCommand {
    /// Renders Application objects with Kustomize sources (their
    /// `kustomize` overrides applied to the kustomization in memory, as
    /// Argo CD's edit sequence applies them; the repository is never
    /// modified) and prints their objects, with Argo CD's tracking
    /// annotation.
    Build(gitops::ArgoBuildArgs),
}

#[derive(Subcommand)]
enum CompositionCommand {
    /// Prints the consolidated transformer list of DIR's composition
    /// (imports, overrides, order and default names applied) as YAML
    /// documents, without running anything.
    Consolidate {
        /// Directory holding composition.yaml (defaults to the current
        /// directory), or the composition file itself.
        #[arg(value_name = "DIR", default_value = ".")]
        dir: PathBuf,
        /// As for `build`: whether imported composition files may lie
        /// outside the importing one's folder.
        #[arg(
            long = "load-restrictor",
            value_name = "RESTRICTOR",
            default_value = "LoadRestrictionsRootOnly"
        )]
        load_restrictor: LoadRestrictor,
    },
}

#[derive(Subcommand)]
enum CacheCommand {
    /// Prints the cache folder ($KRUSTY_CACHE_DIR, else the XDG cache
    /// folder).
    Dir,
    /// Removes everything in the cache (a folder tagged as krusty's
    /// cache only; through a symlink, the folder it names is emptied).
    Clean,
}

#[derive(clap::Args)]
struct BuildArgs {
    /// Directory holding kustomization.yaml (defaults to the current
    /// directory). Several DIRs build several targets in one run, with
    /// `-o OUTDIR`: one file per target (docs/function-servers.md).
    #[arg(value_name = "DIR", default_value = ".")]
    dirs: Vec<PathBuf>,
    /// If specified, write output to this path: a file, or an existing
    /// directory to get one file per resource (with several DIRs: the
    /// folder that gets one file per target).
    /// An empty PATH means stdout, as in Kustomize.
    #[arg(short = 'o', long = "output", value_name = "PATH", value_parser = clap::value_parser!(std::ffi::OsString))]
    output: Option<std::ffi::OsString>,
    /// Build DIR as two Kustomize releases (OLD,NEW: v5.5.0,v5.8.1, in
    /// either order) instead of one, and print what differs, resource by
    /// resource, as a diff: what upgrading Kustomize would change. Exit
    /// status 0 when the outputs are the same, 1 when they differ
    /// (docs/compatibility.md).
    #[arg(
        long = "compare-versions",
        value_name = "OLD,NEW",
        value_parser = compare::parse_versions,
        conflicts_with = "output"
    )]
    compare_versions: Option<compare::VersionPair>,
    /// If set to 'LoadRestrictionsNone', local kustomizations may load files
    /// from outside their root. This does, however, break the relocatability
    /// of the kustomization.
    #[arg(
        long = "load-restrictor",
        value_name = "RESTRICTOR",
        default_value = "LoadRestrictionsRootOnly"
    )]
    load_restrictor: LoadRestrictor,
    /// Add the label `app.kubernetes.io/managed-by` (`kustomize-v5.8.1`;
    /// `kustomize-(devel)` as v5.5.0) to every resource, as Kustomize does
    /// with this flag. Deprecated: `buildMetadata: [managedByLabel]`.
    #[arg(long = "enable-managedby-label", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    enable_managedby_label: bool,
    /// Fetch nothing: remote bases and files come from krusty's cache
    /// only (refs resolve to the commit they had when last fetched), and
    /// one missing from it is an error.
    #[arg(long = "offline")]
    offline: bool,
    /// Stop a download (a remote file, catalog or program, an OCI pull)
    /// that has not ended after this many seconds, redirects included.
    #[arg(
        long = "fetch-timeout",
        value_name = "SECONDS",
        default_value_t = 300.0
    )]
    fetch_timeout: f64,
    /// Refuse a download larger than this: bytes, or with a unit (256Mi,
    /// 1Gi, 500M).
    #[arg(long = "fetch-max-size", value_name = "SIZE", default_value = "512Mi", value_parser = krusty_api::parse_size)]
    fetch_max_size: u64,
    /// Trust an OCI artifact (catalog, function definition, exec program,
    /// a catalog function's container image) only when it carries a
    /// cosign signature by the ECDSA P-256 public key in this PEM file;
    /// repeatable (any one key is enough).
    #[arg(long = "verify-key", value_name = "PATH")]
    verify_keys: Vec<PathBuf>,
    /// After the build, print on stderr where it spent its time: the wall
    /// time of each stage (reading files, fetching, each generator,
    /// transformer, function and chart, the finishing stages, writing the
    /// output), summed by stage and by kustomization folder.
    #[arg(long = "timings", conflicts_with = "compare_versions")]
    timings: bool,
    #[command(flatten)]
    functions: FunctionArgs,
    #[command(flatten)]
    helm: HelmArgs,
}

/// Kustomize's Helm flags (see docs/helm.md), and krusty's time limit
/// for helm.
#[derive(clap::Args)]
#[command(next_help_heading = "Helm")]
struct HelmArgs {
    /// Enable use of the Helm chart inflator generator.
    #[arg(long = "enable-helm", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    enable_helm: bool,
    /// Helm command (path to executable).
    #[arg(long = "helm-command", value_name = "COMMAND", default_value = "helm")]
    helm_command: String,
    /// Kubernetes API versions used by Helm for Capabilities.APIVersions
    /// (repeatable; helm splits a value at commas).
    #[arg(long = "helm-api-versions", value_name = "VERSION")]
    helm_api_versions: Vec<String>,
    /// Kubernetes version used by Helm for Capabilities.KubeVersion.
    #[arg(long = "helm-kube-version", value_name = "VERSION", default_value = "")]
    helm_kube_version: String,
    /// Enable debug output from the Helm chart inflator generator.
    #[arg(long = "helm-debug", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    helm_debug: bool,
    /// Stop a helm command that runs longer than this many seconds.
    #[arg(long = "helm-timeout", value_name = "SECONDS", default_value_t = 300.0)]
    helm_timeout: f64,
    /// Stop a helm command that prints more than this on stdout: bytes,
    /// or with a unit (512Mi, 1Gi).
    #[arg(long = "helm-max-output", value_name = "SIZE", default_value = "512Mi", value_parser = krusty_api::parse_size)]
    helm_max_output: u64,
    /// Run helm for every chart, instead of reusing the output kept in
    /// krusty's cache from an earlier run with the same chart, values,
    /// flags and helm binary.
    #[arg(long = "no-helm-cache")]
    no_helm_cache: bool,
}

impl HelmArgs {
    fn options(&self) -> Result<HelmOptions, String> {
        if !(self.helm_timeout.is_finite() && self.helm_timeout > 0.0) {
            return Err("--helm-timeout must be a positive number of seconds".into());
        }
        Ok(HelmOptions {
            enabled: self.enable_helm,
            command: self.helm_command.clone(),
            api_versions: self.helm_api_versions.clone(),
            kube_version: self.helm_kube_version.clone(),
            debug: self.helm_debug,
            timeout: std::time::Duration::from_secs_f64(self.helm_timeout),
            max_output: usize::try_from(self.helm_max_output).unwrap_or(usize::MAX),
            cache: !self.no_helm_cache,
        })
    }
}

/// What KRM functions may do; Kustomize's flag names.
#[derive(clap::Args)]
#[command(next_help_heading = "KRM functions")]
struct FunctionArgs {
    /// Run KRM functions declared in generators, transformers and
    /// validators (none run without it).
    #[arg(long = "enable-alpha-plugins", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    enable_alpha_plugins: bool,
    /// Also run exec functions (local executables).
    #[arg(long = "enable-exec", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    enable_exec: bool,
    /// Also run Starlark functions.
    #[arg(long = "enable-star", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    enable_star: bool,
    /// Give network access to container functions that ask for it.
    #[arg(long = "network", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    network: bool,
    /// A bind mount for container functions:
    /// type=bind,src=PATH,dst=PATH[,rw=true]; repeatable.
    #[arg(long = "mount", value_name = "MOUNT")]
    mounts: Vec<String>,
    /// The container network for functions given network access (default:
    /// the host's network).
    #[arg(long = "network-name", value_name = "NAME")]
    network_name: Option<String>,
    /// Run container functions as the current user instead of nobody.
    #[arg(long = "as-current-user", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    as_current_user: bool,
    /// An environment variable for functions: NAME=value, or NAME to pass
    /// krusty's own; repeatable.
    #[arg(short = 'e', long = "env", value_name = "VAR")]
    envs: Vec<String>,
    /// Stop a function that runs longer than this many seconds.
    #[arg(
        long = "function-timeout",
        value_name = "SECONDS",
        default_value_t = 300.0
    )]
    timeout: f64,
    /// Stop a function that prints more than this many bytes.
    #[arg(long = "function-max-output", value_name = "BYTES", default_value_t = 512 << 20)]
    max_output: usize,
    /// Stop a Starlark or container function that uses more memory than
    /// this: bytes, or with a unit (256Mi, 1Gi, 500M).
    #[arg(long = "function-max-memory", value_name = "SIZE", default_value = "1Gi", value_parser = krusty_api::parse_size)]
    max_memory: u64,
    /// The docker-compatible CLI for container functions (default:
    /// $KRUSTY_CONTAINER_CLI, else podman, else docker).
    #[arg(long = "container-cli", value_name = "CLI")]
    container_cli: Option<String>,
    /// Run the functions of the catalog at this place: its file (a path
    /// from the current directory), https:// URL, git reference or
    /// oci:// reference; repeatable.
    #[arg(long = "trusted-catalog", value_name = "CATALOG")]
    trusted_catalogs: Vec<String>,
    /// Run idempotent functions every time, instead of reusing the output
    /// kept in krusty's cache from an earlier run with the same runtime
    /// digest, config and input.
    #[arg(long = "no-function-cache")]
    no_function_cache: bool,
    /// Run at most this many spec v2 function servers at once (the least
    /// recently used idle one is stopped for another).
    #[arg(long = "max-function-servers", value_name = "N", default_value_t = krusty_api::DEFAULT_MAX_SERVERS)]
    max_servers: usize,
}

impl FunctionArgs {
    fn policy(&self) -> Result<Policy, String> {
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err("--function-timeout must be a positive number of seconds".into());
        }
        krusty_api::catalog::check_trusted(&self.trusted_catalogs).map_err(|e| e.to_string())?;
        if self.max_servers == 0 {
            return Err("--max-function-servers must be at least 1".into());
        }
        Ok(Policy {
            enable_alpha_plugins: self.enable_alpha_plugins,
            enable_exec: self.enable_exec,
            enable_star: self.enable_star,
            network: self.network,
            network_name: self.network_name.clone(),
            mounts: self
                .mounts
                .iter()
                .map(|m| Mount::parse_flag(m).map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?,
            as_current_user: self.as_current_user,
            envs: self.envs.clone(),
            timeout: std::time::Duration::from_secs_f64(self.timeout),
            max_output: self.max_output,
            max_memory: self.max_memory,
            container_cli: self.container_cli.clone(),
            trusted_catalogs: self.trusted_catalogs.clone(),
            max_servers: self.max_servers,
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        })
    }
}

/// mimalloc: per-thread heaps for the parallel parts; fewer instructions
/// per allocation than the system allocator. Its version 2 (`v2`) touches
/// fewer fresh pages than version 3 on these builds (scale 350: about 5,550
/// page faults against 5,880, 2-9% less wall time from scale 20 to 3500).
/// Built without transparent huge pages (`no_thp`): on a warm machine they
/// save page faults, but a build that follows another program (a
/// benchmark's usual order) waits for the kernel to assemble fresh 2 MiB
/// pages, and is slower (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    ignore_file_size_signal();
    let cli = parse();
    let result = match cli.command {
        Command::Version(args) => version::run(&args, cli.kustomize_version),
        Command::Edit(command) => edit::run(&command, cli.kustomize_version),
        Command::Create(args) => edit::create(&args),
        Command::Build(args) => match pool::in_pool(|| run_build(&args, cli.kustomize_version)) {
            // `--compare-versions` says "the outputs differ" with status 1.
            Ok(code) => return code,
            Err(msg) => Err(msg),
        },
        Command::Cache(command) => run_cache(&command),
        Command::Composition(command) => run_composition(&command),
        Command::View(command) => view::run(&command),
        Command::Flux(FluxCommand::Build(args)) => {
            pool::in_pool(|| gitops::flux_build(&args, cli.kustomize_version))
        }
        Command::Argocd(ArgoCommand::Build(args)) => {
            pool::in_pool(|| gitops::argocd_build(&args, cli.kustomize_version))
        }
        Command::Targets(args) => gitops::targets(&args, cli.kustomize_version),
        Command::Diff(args) => return pool::in_pool(|| gitops::diff(&args, cli.kustomize_version)),
        Command::Completion(args) => manual::completion(&args, command()),
        Command::Man(args) => manual::man(&args, command()),
        Command::Install(args) => manual::install(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("Error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// The command definition: the derived one, with each subcommand's
/// examples at the end of its `--help`.
fn command() -> clap::Command {
    examples::with_examples(Cli::command())
}

/// The command line, parsed (or, for a mistake or `--help`, the message
/// printed and the process ended, as clap does).
fn parse() -> Cli {
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// A write past the file size limit (`ulimit -f`) fails with an error
/// instead of killing the process, as in Go programs such as Kustomize:
/// krusty then removes its partial output and reports it.
fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to "ignore" runs no code.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

fn run_composition(command: &CompositionCommand) -> Result<(), String> {
    let CompositionCommand::Consolidate {
        dir,
        load_restrictor,
    } = command;
    let file = if dir.is_dir() {
        composition::find(dir)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "no composition.yaml or composition.yml in '{}'",
                    dir.display()
                )
            })?
    } else {
        dir.clone()
    };
    let list = composition::consolidate(&file, *load_restrictor).map_err(|e| e.to_string())?;
    print!(
        "{}",
        composition::to_yaml(&list).map_err(|e| e.to_string())?
    );
    Ok(())
}

fn run_cache(command: &CacheCommand) -> Result<(), String> {
    let root = Cache::location().map_err(|e| e.to_string())?;
    match command {
        CacheCommand::Dir => println!("{}", root.display()),
        CacheCommand::Clean => Cache::open(root.clone())
            .and_then(|cache| cache.clean())
            .map_err(|e| format!("cannot clean {}: {e}", root.display()))?,
    }
    Ok(())
}

/// The bounds on each download, from `--fetch-timeout` and
/// `--fetch-max-size`.
fn fetch_limits(args: &BuildArgs) -> Result<krusty_api::FetchLimits, String> {
    let timeout = std::time::Duration::try_from_secs_f64(args.fetch_timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or("--fetch-timeout must be a positive number of seconds")?;
    Ok(krusty_api::FetchLimits {
        timeout,
        max_bytes: args.fetch_max_size,
    })
}

fn run_build(args: &BuildArgs, kustomize_version: KustomizeVersion) -> Result<ExitCode, String> {
    let opts = BuildOptions {
        kustomize_version,
        load_restrictor: args.load_restrictor,
        managed_by_label: args.enable_managedby_label,
        helm: args.helm.options()?,
        functions: args.functions.policy()?,
        fetch: FetchOptions {
            offline: args.offline,
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            cache_dir: None,
            function_cache: !args.functions.no_function_cache,
            limits: fetch_limits(args)?,
            verify_keys: krusty_api::VerifyKeys::read(&args.verify_keys)
                .map_err(|e| e.to_string())?,
        },
        ..BuildOptions::default()
    };
    if args.enable_managedby_label {
        eprintln!("Flag --enable-managedby-label has been deprecated, The flag `enable-managedby-label` has been deprecated. Use the `managedByLabel` option in the `buildMetadata` field instead.");
    }
    let engine = Engine::new(opts);
    if let Some(versions) = args.compare_versions {
        return compare::run(&args.dirs, versions, &engine);
    }
    let started = std::time::Instant::now();
    let timings = args.timings.then(|| Arc::new(Timings::default()));
    let request = BuildRequest {
        timings: timings.clone(),
        ..BuildRequest::default()
    };
    let report = |top: &Path| {
        if let Some(timings) = &timings {
            let top = std::fs::canonicalize(top).unwrap_or_else(|_| top.to_path_buf());
            eprint!("{}", timings.report(&top, started.elapsed()));
        }
    };
    if let [_, _, ..] = args.dirs.as_slice() {
        targets::build_all(&args.dirs, args.output.as_deref(), &engine, &request)?;
        report(Path::new("."));
        return Ok(ExitCode::SUCCESS);
    }
    let dir = args.dirs.first().map_or(Path::new("."), PathBuf::as_path);
    let out = engine
        .build_with(dir, &request)
        .0
        .map_err(|e| e.to_string());
    // Its function servers stop before the output is written.
    drop(engine);
    let out = out?;
    for w in out.warnings() {
        eprintln!("{w}");
    }
    let writing = std::time::Instant::now();
    // An empty `-o ''` means stdout, as in Kustomize.
    let written = match args
        .output
        .as_deref()
        .filter(|p| !p.is_empty())
        .map(Path::new)
    {
        None => output::write_stdout(&output::render(out.resources())?),
        Some(path) if path.is_dir() => output::write_dir(path, out.resources()),
        Some(path) => {
            let stream = output::render(out.resources())?;
            output::write_file(path, |f| stream.write_to(f))
        }
    };
    if let Some(timings) = &timings {
        timings.record(TimedStage {
            target: PathBuf::new(),
            stage: "write output".to_string(),
            elapsed: writing.elapsed(),
        });
    }
    // The process ends here: freeing every node one by one would only
    // cost time (a tenth of a large build).
    std::mem::forget(out);
    written?;
    report(dir);
    Ok(ExitCode::SUCCESS)
}
