//! Running a child process with its stdin fed and its stdout and stderr
//! drained at the same time (so large lists cannot deadlock), under a
//! time limit and an output limit.
//!
//! The child leads a process group of its own: its end, a limit, an
//! interrupt or the end of krusty (the [`watchdog`]) kills the group, so
//! what the child started dies with it (and cannot hold its output
//! back). A memory
//! limit, when given, is set on the child as soon as it is started, before
//! it is given its input (Linux's `prlimit`), so no `fork` of krusty is
//! needed: `posix_spawn` starts the child whatever krusty's size (a fork
//! copies krusty's page tables and makes it fault on every page it writes
//! afterwards).

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::{interrupt, watchdog};

/// How much of stderr is kept (the rest is read and dropped).
const STDERR_KEPT: usize = 64 << 10;

/// What a finished process produced.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it wrote on stdout.
    pub stdout: Vec<u8>,
    /// The start of what it wrote on stderr.
    pub stderr: Vec<u8>,
}

/// Why a process did not finish normally.
#[derive(Debug)]
pub enum Failure {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It ran past the time limit and was killed.
    Timeout {
        /// The start of its stderr.
        stderr: Vec<u8>,
    },
    /// It wrote more than the output limit and was killed.
    TooMuchOutput,
}

/// Runs `cmd` with `input` on stdin, with at most `max_memory` bytes of
/// data when given ([`limit_memory`]). `on_kill` runs after the process is
/// killed for a limit (to clean up what it started, e.g. a container).
pub fn run(
    mut cmd: Command,
    input: Vec<u8>,
    timeout: Duration,
    max_output: usize,
    max_memory: Option<u64>,
    on_kill: &dyn Fn(),
) -> Result<Finished, Failure> {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(Failure::Spawn)?;
    let leader = child.id();
    if let Some(bytes) = max_memory {
        if let Err(e) = limit_memory(leader, bytes) {
            kill_group(leader);
            let _ = child.wait();
            return Err(Failure::Spawn(e));
        }
    }
    watchdog::watch(leader);
    let registration = interrupt::on_interrupt(move || kill_group(leader));
    let outcome = supervise(&mut child, input, timeout, max_output, on_kill);
    watchdog::forget(leader);
    // An interrupt killed the child: the clean-up is ending the process.
    while interrupt::interrupted() {
        thread::park();
    }
    drop(registration);
    outcome
}

/// Feeds, drains and watches a started child until it ends or a limit
/// stops it.
fn supervise(
    child: &mut Child,
    input: Vec<u8>,
    timeout: Duration,
    max_output: usize,
    on_kill: &dyn Fn(),
) -> Result<Finished, Failure> {
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            // A function may exit without reading everything: not our error.
            let _ = stdin.write_all(&input);
        }
    });
    let too_much = Arc::new(AtomicBool::new(false));
    let (out_tx, out_rx) = mpsc::channel::<()>();
    let flag = Arc::clone(&too_much);
    // Shared, so what the process printed is at hand even when a process
    // that left its group keeps the pipe open.
    let printed = Arc::new(Mutex::new(Vec::new()));
    let out_sink = Arc::clone(&printed);
    thread::spawn(move || {
        if let Some(mut stdout) = stdout {
            let mut chunk = vec![0u8; 64 << 10];
            loop {
                match stdout.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let Ok(mut buf) = out_sink.lock() else { break };
                        if buf.len() + n > max_output {
                            flag.store(true, Ordering::SeqCst);
                            break;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                }
            }
        }
        let _ = out_tx.send(());
    });
    // Shared, so the start of stderr is at hand even when a process
    // left behind keeps the pipe open.
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (err_tx, err_rx) = mpsc::channel::<()>();
    let sink = Arc::clone(&kept);
    thread::spawn(move || {
        if let Some(mut stderr) = stderr {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut kept) = sink.lock() {
                    let room = STDERR_KEPT.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        }
        let _ = err_tx.send(());
    });
    let stderr_so_far = || kept.lock().map(|k| k.clone()).unwrap_or_default();

    let start = Instant::now();
    let mut pause = Duration::from_micros(50);
    let status = loop {
        if has_exited(child) {
            // What it started and left running (holding its pipes) ends
            // with it; its group cannot be reused before it is reaped.
            kill_group(child.id());
            if let Ok(status) = child.wait() {
                break status;
            }
        }
        if too_much.load(Ordering::SeqCst) {
            kill(child, on_kill);
            return Err(Failure::TooMuchOutput);
        }
        if start.elapsed() >= timeout {
            kill(child, on_kill);
            let _ = err_rx.recv_timeout(Duration::from_millis(200));
            return Err(Failure::Timeout {
                stderr: stderr_so_far(),
            });
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    // The process and its group are gone; its pipes close unless a
    // process that left the group holds them, so do not wait forever.
    let grace = Duration::from_secs(5);
    let _ = out_rx.recv_timeout(grace);
    let stdout = printed.lock().map(|p| p.clone()).unwrap_or_default();
    if too_much.load(Ordering::SeqCst) {
        return Err(Failure::TooMuchOutput);
    }
    let _ = err_rx.recv_timeout(grace);
    Ok(Finished {
        status,
        stdout,
        stderr: stderr_so_far(),
    })
}

/// What a program whose stdout and stderr are read as one text printed.
#[derive(Debug)]
pub struct Combined {
    /// Its exit status.
    pub status: ExitStatus,
    /// What it wrote on stdout and stderr, in the order it wrote it.
    pub output: Vec<u8>,
}

/// Runs `cmd` with nothing on stdin and its stdout and stderr on one pipe
/// (as Go's `CombinedOutput` reads them), within `timeout`. It leads a
/// process group of its own, which its end, the time limit, an interrupt
/// or the end of krusty (the [`watchdog`]) kills.
pub fn run_combined(mut cmd: Command, timeout: Duration) -> Result<Combined, Failure> {
    use std::os::unix::process::CommandExt;
    let (mut reader, writer) = std::io::pipe().map_err(Failure::Spawn)?;
    let stderr = writer.try_clone().map_err(Failure::Spawn)?;
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(stderr)
        .process_group(0);
    let spawned = cmd.spawn();
    // The write ends now belong to the child alone: the pipe ends with it.
    drop(cmd);
    let mut child = spawned.map_err(Failure::Spawn)?;
    let leader = child.id();
    watchdog::watch(leader);
    let registration = interrupt::on_interrupt(move || kill_group(leader));
    let (printed_tx, printed_rx) = mpsc::channel();
    thread::spawn(move || {
        let mut text = Vec::new();
        let _ = reader.read_to_end(&mut text);
        let _ = printed_tx.send(text);
    });
    let start = Instant::now();
    let mut pause = Duration::from_micros(50);
    let outcome = loop {
        if has_exited(&mut child) {
            kill_group(leader);
            match child.wait() {
                Ok(status) => break Ok(status),
                Err(e) => break Err(Failure::Spawn(e)),
            }
        }
        if start.elapsed() >= timeout {
            kill(&mut child, &|| {});
            break Err(Failure::Timeout { stderr: Vec::new() });
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    };
    watchdog::forget(leader);
    // An interrupt killed the child: the clean-up is ending the process.
    while interrupt::interrupted() {
        thread::park();
    }
    drop(registration);
    let status = outcome?;
    // The group is gone; a process that left it may hold the pipe open.
    let output = printed_rx
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_default();
    Ok(Combined { status, output })
}

/// Lowers the data size limit of process `pid` (which has not been given
/// its input yet) to `bytes`, or to its hard limit if that is lower:
/// heap, stacks and private mappings count. Past it, allocations fail.
/// Lowering a limit needs no privilege.
#[cfg(target_os = "linux")]
pub fn limit_memory(pid: u32, bytes: u64) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit reads no memory when the new limit is null and
    // writes only `old`.
    if unsafe { libc::prlimit(pid, libc::RLIMIT_DATA, std::ptr::null(), &mut old) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let wanted = libc::rlim_t::try_from(bytes).unwrap_or(libc::RLIM_INFINITY);
    let new = libc::rlimit {
        rlim_cur: wanted.min(old.rlim_max),
        rlim_max: wanted.min(old.rlim_max),
    };
    // SAFETY: prlimit reads only `new` and writes nothing when the old
    // limit's pointer is null.
    if unsafe { libc::prlimit(pid, libc::RLIMIT_DATA, &new, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Lowering another process's limits needs Linux's `prlimit`; elsewhere
/// the memory limit is not applied.
#[cfg(not(target_os = "linux"))]
pub fn limit_memory(_pid: u32, _bytes: u64) -> std::io::Result<()> {
    Ok(())
}

/// Whether `child` has ended, without reaping it: while it is a zombie,
/// its process and group ids stay its own.
#[cfg(target_os = "linux")]
fn has_exited(child: &mut Child) -> bool {
    let pid: libc::id_t = child.id();
    // SAFETY: waitid writes only `info`, which is zeroed first (a zero
    // `si_pid` then means that the child has not ended).
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        libc::waitid(libc::P_PID, pid, &mut info, flags) == 0 && info.si_pid() != 0
    }
}

/// Whether `child` has ended (elsewhere it is reaped at once).
#[cfg(not(target_os = "linux"))]
fn has_exited(child: &mut Child) -> bool {
    matches!(child.try_wait(), Ok(Some(_)))
}

/// Kills every process in the group that `leader` leads.
fn kill_group(leader: u32) {
    if let Ok(id) = libc::pid_t::try_from(leader) {
        // SAFETY: kill(2) touches no memory of ours; a group that is gone
        // gives ESRCH, which is fine.
        unsafe {
            libc::kill(-id, libc::SIGKILL);
        }
    }
}

fn kill(child: &mut Child, on_kill: &dyn Fn()) {
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
    on_kill();
}

/// How a process that failed ended, for error messages: "exited with
/// status N" or "was killed by a signal".
pub fn describe_exit(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "was killed by a signal".to_string(),
    }
}

/// The start of a process's stderr, for error messages.
pub fn stderr_excerpt(stderr: &[u8]) -> String {
    const SHOWN: usize = 2000;
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim_end();
    if text.is_empty() {
        return "(nothing on stderr)".into();
    }
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn large_input_and_output_do_not_deadlock() {
        let input = vec![b'x'; 8 << 20];
        let done = run(
            sh("cat"),
            input.clone(),
            Duration::from_secs(30),
            64 << 20,
            None,
            &|| {},
        )
        .unwrap();
        assert!(done.status.success());
        assert_eq!(done.stdout.len(), input.len());
    }

    #[test]
    fn a_limit_kills_what_the_process_started() {
        let dir = std::env::temp_dir().join(format!("krusty-process-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("sleeper");
        let script = format!("sleep 600 & echo $! > {}; wait", pidfile.display());
        let started = Instant::now();
        let outcome = run(
            sh(&script),
            vec![],
            Duration::from_millis(500),
            1 << 20,
            None,
            &|| {},
        );
        assert!(
            matches!(outcome, Err(Failure::Timeout { .. })),
            "{outcome:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        let sleeper = std::fs::read_to_string(&pidfile).unwrap();
        let gone = || match std::fs::read_to_string(format!("/proc/{}/stat", sleeper.trim())) {
            Err(_) => true,
            // A zombie waiting for a parent that does not reap it.
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z'),
        };
        let deadline = Instant::now() + Duration::from_secs(2);
        while !gone() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(), "the process the function started still runs");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_memory_limit_is_the_childs_data_limit() {
        // The limit is set before the input is given: a child that reads
        // its input first sees it.
        let done = run(
            sh("read line; ulimit -d"),
            b"go\n".to_vec(),
            Duration::from_secs(10),
            1 << 20,
            Some(64 << 20),
            &|| {},
        )
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&done.stdout).trim(), "65536");
    }

    #[test]
    fn limits_kill_the_process() {
        let t = Instant::now();
        match run(
            sh("echo started >&2; sleep 30"),
            vec![],
            Duration::from_millis(300),
            1 << 20,
            None,
            &|| {},
        ) {
            Err(Failure::Timeout { stderr }) => assert_eq!(stderr, b"started\n"),
            other => panic!("{other:?}"),
        }
        assert!(t.elapsed() < Duration::from_secs(10));
        assert!(matches!(
            run(
                sh("yes"),
                vec![],
                Duration::from_secs(30),
                1 << 20,
                None,
                &|| {}
            ),
            Err(Failure::TooMuchOutput)
        ));
        assert!(matches!(
            run(
                Command::new("/nonexistent/fn"),
                vec![],
                Duration::from_secs(1),
                1,
                None,
                &|| {}
            ),
            Err(Failure::Spawn(_))
        ));
    }
}
