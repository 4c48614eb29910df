//! The watchdog: kills function processes that krusty leaves running when
//! it ends without stopping them, even when it is killed outright
//! (SIGKILL), which no code of krusty's can answer.
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

use std::io::Write;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The watchdog's program: the groups listed, then killed at the end of
/// input.
const SCRIPT: &str = r#"groups=" "
while read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) g=${line#-}
        case $groups in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
"#;

/// The pipe to the watchdog, once started (`None`: it could not be).
static PIPE: OnceLock<Option<Mutex<ChildStdin>>> = OnceLock::new();

/// Starts the watchdog.
fn start() -> Option<Mutex<ChildStdin>> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("/bin/sh")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    // Never waited for: it ends after krusty does.
    child.stdin.take().map(Mutex::new)
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
    PIPE.get_or_init(start);
    tell(format!("+{leader}\n"));
}

/// Process group `leader` has ended.
pub fn forget(leader: u32) {
    tell(format!("-{leader}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The script on its own: groups that ended are not killed; the
    /// others are, at the end of its input.
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
        let mut dog = Command::new("/bin/sh")
            .args(["-c", SCRIPT])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = dog.stdin.take().unwrap();
        let input = format!("+{e}\n+{r}\n-{e}\n", e = ended.id(), r = running.id());
        pipe.write_all(input.as_bytes()).unwrap();
        drop(pipe);
        assert!(dog.wait().unwrap().success());
        // The listed group was killed; the one that "ended" still runs.
        assert!(running.wait().unwrap().code().is_none());
        assert!(ended.try_wait().unwrap().is_none());
        ended.kill().unwrap();
        let _ = ended.wait();
    }
}
