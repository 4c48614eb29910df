//! The `krusty` command line: a drop-in for `kustomize build`.

mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use krusty_build::{build, BuildOptions, LoadRestrictor};

/// krusty: a fast, Kustomize-compatible engine for Kubernetes configuration.
#[derive(Parser)]
#[command(name = "krusty", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a kustomization target from a directory.
    ///
    /// Prints the resources of DIR/kustomization.yaml (and everything it
    /// includes) to stdout, exactly as `kustomize build` does.
    Build(BuildArgs),
    /// Print the version of krusty.
    Version,
}

#[derive(clap::Args)]
struct BuildArgs {
    /// Directory holding kustomization.yaml (defaults to the current directory).
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// If specified, write output to this path: a file, or an existing
    /// directory to get one file per resource.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    output: Option<PathBuf>,
    /// If set to 'LoadRestrictionsNone', local kustomizations may load files
    /// from outside their root. This does, however, break the relocatability
    /// of the kustomization.
    #[arg(
        long = "load-restrictor",
        value_name = "RESTRICTOR",
        default_value = "LoadRestrictionsRootOnly"
    )]
    load_restrictor: LoadRestrictor,
    /// Add the label `app.kubernetes.io/managed-by: kustomize-(devel)` to
    /// every resource, as Kustomize does with this flag.
    #[arg(long = "enable-managedby-label")]
    enable_managedby_label: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Version => {
            println!("krusty {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::Build(args) => match run_build(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(msg) => {
                eprintln!("Error: {msg}");
                ExitCode::FAILURE
            }
        },
    }
}

fn run_build(args: &BuildArgs) -> Result<(), String> {
    let opts = BuildOptions {
        load_restrictor: args.load_restrictor,
        managed_by_label: args.enable_managedby_label,
    };
    let out = build(&args.dir, &opts).map_err(|e| e.to_string())?;
    for w in &out.warnings {
        eprintln!("{w}");
    }
    let written = match &args.output {
        None => {
            let text = output::render_stream(&out.resources)?;
            output::write_stdout(&text)
        }
        Some(path) if path.is_dir() => output::write_dir(path, &out.resources),
        Some(path) => {
            let text = output::render_stream(&out.resources)?;
            output::write_file_atomically(path, text.as_bytes())
        }
    };
    // The process ends here: freeing every node one by one would only
    // cost time (a tenth of a large build).
    std::mem::forget(out);
    written
}
