//! `krusty completion SHELL`, `krusty man` and `krusty install DIR`: shell
//! completion scripts and manual pages made from the command definitions
//! that `--help` shows, and a copy of the running programs into a folder
//! (an image with no shell has no `cp`: docs/install.md).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Command;

/// `completion`'s argument.
#[derive(clap::Args)]
pub struct CompletionArgs {
    /// The shell to write the completion script for.
    #[arg(value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// `man`'s flags.
#[derive(clap::Args)]
pub struct ManArgs {
    /// Write krusty.1 and one page per subcommand (krusty-build.1,
    /// krusty-edit-set-image.1, ...) into this existing folder, instead of
    /// printing krusty.1.
    #[arg(long = "dir", value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// `install`'s flags.
#[derive(clap::Args)]
pub struct InstallArgs {
    /// The existing folder to copy krusty (and krusty-starlark, when it is
    /// beside the running krusty) into.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The name to give the copy of krusty: `kustomize` makes it the
    /// program that tools running `kustomize` find.
    #[arg(long = "name", value_name = "NAME", default_value = "krusty")]
    name: String,
}

/// Prints the completion script of `shell` for `command`.
pub fn completion(args: &CompletionArgs, mut command: Command) -> Result<(), String> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "krusty", &mut script);
    write_stdout(&script)
}

/// Prints krusty's manual page, or writes every page into `--dir`.
pub fn man(args: &ManArgs, command: Command) -> Result<(), String> {
    let pages = pages(command);
    match &args.dir {
        None => write_stdout(&pages[0].1),
        Some(dir) => {
            for (name, page) in &pages {
                let path = dir.join(name);
                write_atomically(&path, page, 0o644)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            Ok(())
        }
    }
}

/// Every manual page of `command` and its subcommands, `krusty.1` first,
/// each with its file name. A subcommand's page is named after its path
/// (`krusty-edit-set-image.1`) and shows it as `krusty edit set image`.
fn pages(command: Command) -> Vec<(String, Vec<u8>)> {
    let mut command = command;
    command.build();
    let mut pages = Vec::new();
    collect_pages(&command, "krusty", &mut pages);
    pages
}

fn collect_pages(command: &Command, path: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let title = path.replace(' ', "-");
    let mut page = Vec::new();
    let named = command
        .clone()
        .name(title.clone())
        .bin_name(path)
        .version(env!("CARGO_PKG_VERSION"));
    // Rendering into memory cannot fail.
    let _ = clap_mangen::Man::new(named).render(&mut page);
    pages.push((format!("{title}.1"), page));
    for sub in command.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        collect_pages(sub, &format!("{path} {}", sub.get_name()), pages);
    }
}

/// Copies the running krusty into `args.dir` as `args.name`, and
/// krusty-starlark beside it when the running krusty has one; each copy is
/// written to a new file and renamed into place, so a link already there is
/// replaced, never followed.
pub fn install(args: &InstallArgs) -> Result<(), String> {
    if args.name.is_empty() || args.name.contains('/') || args.name == "." || args.name == ".." {
        return Err(format!(
            "--name '{}' is not a file name",
            args.name.escape_debug()
        ));
    }
    if !args.dir.is_dir() {
        return Err(format!("{} is not a directory", args.dir.display()));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find krusty itself: {e}"))?;
    let mut copies = vec![(exe.clone(), args.dir.join(&args.name))];
    let starlark = exe.with_file_name(krusty_api::STARLARK_PROGRAM);
    if starlark.is_file() {
        copies.push((starlark, args.dir.join(krusty_api::STARLARK_PROGRAM)));
    }
    for (from, to) in copies {
        let bytes =
            std::fs::read(&from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        write_atomically(&to, &bytes, 0o755)
            .map_err(|e| format!("cannot write {}: {e}", to.display()))?;
        eprintln!("installed {}", to.display());
    }
    Ok(())
}

/// Writes `bytes` to a new file beside `path`, with `mode`, then renames
/// it to `path`.
fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn write_stdout(bytes: &[u8]) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}
