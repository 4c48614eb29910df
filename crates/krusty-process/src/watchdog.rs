//! The watchdog: kills function processes, and removes function
//! containers (spec v1 runs and servers), that krusty leaves running when it ends without stopping
//! them, even when it is killed outright (SIGKILL), which no code of
//! krusty's can answer.
//!
//! It is a small shell process, started once per krusty run (the first
//! time a function process starts) in a process group of its own. krusty
//! tells it on a pipe which process groups it starts (`+GROUP`) and which
//! have ended (`-GROUP`); when the pipe reaches its end, krusty is gone,
//! and the watchdog kills the groups still listed. A watchdog is
//! cheaper than asking the kernel to kill each function with krusty
//! (`PR_SET_PDEATHSIG`), which needs each function started with `fork`
//! instead of `posix_spawn`: a fork copies krusty's page tables, and makes
//! krusty fault on every page it writes afterwards.
//!
//! Killing the container CLI's `run` does not stop a container (podman's
//! conmon and docker's daemon keep it), so each container CLI that runs a
//! function gets a watchdog of its own, given the CLI's path and
//! its `rm` options as arguments (never read from the pipe, so never
//! parsed by the shell): krusty tells it the container names (`+cNAME`,
//! `-cNAME`), and at the end of the pipe it runs `CLI rm OPTIONS -- NAMES`
//! (once more after a second if that fails).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The watchdog's program: the groups and container names listed, then,
/// at the end of input, the groups killed and the containers removed
/// with `"$1" rm "$2" … -- NAMES` when a CLI is given.
const SCRIPT: &str = r#"set -f
groups=" " names=" "
while IFS= read -r line; do
  case $line in
    +c*) names="$names${line#+c} " ;;
    -c*) n=${line#-c}
        case $names in *" $n "*) names="${names%% $n *} ${names#* $n }" ;; esac ;;
    +*) groups="$groups${line#+} " ;;
    -*) g=${line#-}
        case $groups in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
case $names in *[!\ ]*) ;; *) exit 0 ;; esac
[ $# -gt 0 ] || exit 0
cli=$1; shift
"$cli" rm "$@" -- $names >/dev/null 2>&1 && exit 0
sleep 1
"$cli" rm "$@" -- $names >/dev/null 2>&1
"#;

/// The pipe to the process groups' watchdog, once started (`None`: it
/// could not be).
static PIPE: OnceLock<Option<Mutex<ChildStdin>>> = OnceLock::new();

/// The pipes to the containers' watchdogs, one per container CLI
/// (`None`: it could not be started).
static CONTAINER_PIPES: Mutex<Vec<(PathBuf, Option<ChildStdin>)>> = Mutex::new(Vec::new());

/// Starts a watchdog; `args` are the script's arguments (a CLI and its
/// `rm` options, or none).
fn start(args: &[&std::ffi::OsStr]) -> Option<ChildStdin> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("/bin/sh")
        .args(["-c", SCRIPT, "krusty-watchdog"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    // Never waited for: it ends after krusty does.
    child.stdin.take()
}

/// Tells the watchdog `line`; a watchdog that is gone is not an error.
fn tell(line: String) {
    if let Some(Some(pipe)) = PIPE.get() {
        if let Ok(mut pipe) = pipe.lock() {
            let _ = pipe.write_all(line.as_bytes());
        }
    }
}

/// Process group `leader` has started: the watchdog kills it if krusty
/// ends first.
pub fn watch(leader: u32) {
    PIPE.get_or_init(|| start(&[]).map(Mutex::new));
    tell(format!("+{leader}\n"));
}

/// Process group `leader` has ended.
pub fn forget(leader: u32) {
    tell(format!("-{leader}\n"));
}

/// Whether `name` can go on the pipe and into the shell's word list as
/// one word: krusty's container names are letters, digits and `-`.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Container `name`, run by `cli`, is about to start: if krusty ends
/// before [`forget_container`], the watchdog removes it with
/// `CLI rm RM_OPTIONS -- NAME`. Returns whether a watchdog watches it.
pub fn watch_container(cli: &Path, rm_options: &[&str], name: &str) -> bool {
    if !plain_name(name) {
        return false;
    }
    let Ok(mut pipes) = CONTAINER_PIPES.lock() else {
        return false;
    };
    let at = match pipes.iter().position(|(c, _)| c == cli) {
        Some(at) => at,
        None => {
            let mut args: Vec<&std::ffi::OsStr> = vec![cli.as_os_str()];
            args.extend(rm_options.iter().map(std::ffi::OsStr::new));
            pipes.push((cli.to_path_buf(), start(&args)));
            pipes.len() - 1
        }
    };
    pipes[at]
        .1
        .as_mut()
        .is_some_and(|pipe| pipe.write_all(format!("+c{name}\n").as_bytes()).is_ok())
}

/// Container `name`, run by `cli`, has been removed.
pub fn forget_container(cli: &Path, name: &str) {
    if !plain_name(name) {
        return;
    }
    if let Ok(mut pipes) = CONTAINER_PIPES.lock() {
        if let Some((_, Some(pipe))) = pipes.iter_mut().find(|(c, _)| c == cli) {
            let _ = pipe.write_all(format!("-c{name}\n").as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The script on its own, with `args`, given `input`; waits for it.
    fn run_script(args: &[&str], input: &str) {
        let mut dog = Command::new("/bin/sh")
            .args(["-c", SCRIPT, "krusty-watchdog"])
            .args(args)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = dog.stdin.take().unwrap();
        pipe.write_all(input.as_bytes()).unwrap();
        drop(pipe);
        assert!(dog.wait().unwrap().success());
    }

    /// Groups that ended are not killed; the others are, at the end of
    /// its input.
    #[test]
    fn kills_the_groups_still_listed_at_the_end() {
        use std::os::unix::process::CommandExt;
        let spawn_group = || {
            Command::new("sleep")
                .arg("600")
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let (mut ended, mut running) = (spawn_group(), spawn_group());
        let input = format!("+{e}\n+{r}\n-{e}\n", e = ended.id(), r = running.id());
        run_script(&[], &input);
        // The listed group was killed; the one that "ended" still runs.
        assert!(running.wait().unwrap().code().is_none());
        assert!(ended.try_wait().unwrap().is_none());
        ended.kill().unwrap();
        let _ = ended.wait();
    }

    /// The containers still listed are removed with the CLI and options
    /// it was given, as arguments after `--`; none listed, no CLI run.
    #[test]
    fn removes_the_containers_still_listed_at_the_end() {
        let dir = std::env::temp_dir().join(format!("krusty-watchdog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A CLI whose path has a space and a quote: an argument, never
        // parsed by the shell.
        let cli = dir.join("fake cli'");
        let log = dir.join("log");
        std::fs::write(
            &cli,
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '%s|' \"$a\"; done >> '{}'\necho >> '{}'\n",
                log.display(),
                log.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&cli, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let cli_arg = cli.to_str().unwrap();
        run_script(
            &[cli_arg, "-f", "-t", "0"],
            "+ckrusty-fn-1-2-0\n+ckrusty-fn-1-2-1\n+ckrusty-fn-1-2-2\n-ckrusty-fn-1-2-1\n",
        );
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "rm|-f|-t|0|--|krusty-fn-1-2-0|krusty-fn-1-2-2|\n"
        );
        std::fs::remove_file(&log).unwrap();
        run_script(&[cli_arg, "-f"], "+ckrusty-fn-1-2-0\n-ckrusty-fn-1-2-0\n");
        assert!(!log.exists(), "no container left: the CLI is not run");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_plain_names_are_watched() {
        assert!(plain_name("krusty-fn-12-345-6"));
        for bad in ["", "-rf", "a b", "a\nb", "*", "$(x)"] {
            assert!(!plain_name(bad), "{bad:?}");
        }
    }
}
