//! # krusty-starlark: the Starlark function runtime
//!
//! A program of its own (`krusty-starlark`, built with `krusty`), which
//! `krusty` runs when a build has Starlark functions. The exchange between
//! the two is described in `krusty_runtime::starlark`; this crate is the
//! other end: [`main`] reads a request, runs the interpreter, and
//! answers. Programs by URL are fetched by krusty's fetch layer, not here.

pub mod interpreter;
pub mod memory;

use std::io::{Read, Write};
use std::process::ExitCode;

use krusty_runtime::starlark::{PARENT_ENV, PROGRAM, PROGRAM_FAILED, RUN};
use krusty_runtime::Failed;
use krusty_yaml::Node;

/// Stack for the interpreter's thread: deep recursion in a program must
/// not overflow the default 8 MiB.
const INTERPRETER_STACK: usize = 64 << 20;

/// Runs the request that `args` (the program's arguments after its name)
/// and stdin describe.
pub fn main(args: &[String]) -> ExitCode {
    die_with_krusty();
    match args {
        [cmd] if cmd == RUN => run_request(),
        _ => usage(),
    }
}

/// When started by krusty (its process id in `KRUSTY_STARLARK_PARENT`),
/// asks Linux to kill this program when krusty ends, so that a runaway
/// program does not outlive a krusty killed outright; exits at once if
/// krusty has already ended.
fn die_with_krusty() {
    #[cfg(target_os = "linux")]
    {
        let Some(parent) = std::env::var(PARENT_ENV)
            .ok()
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            return;
        };
        // SAFETY: prctl and getppid touch no memory of ours.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(PROGRAM_FAILED);
            }
        }
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "{PROGRAM} runs Starlark KRM functions for krusty, which starts it; usage: {PROGRAM} {RUN} (a request on stdin)"
    );
    ExitCode::from(2)
}

/// `run`: the program and the list from stdin; the program's list, or
/// why it failed, on stdout.
fn run_request() -> ExitCode {
    let mut request = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut request) {
        return fail(&Failed::new(format!("cannot read the request: {e}")));
    }
    let (program, input) = match split_request(request) {
        Ok(parts) => parts,
        Err(why) => return fail(&Failed::new(why.to_string())),
    };
    let outcome = std::thread::Builder::new()
        .name("starlark".into())
        .stack_size(INTERPRETER_STACK)
        .spawn(move || interpreter::evaluate(&program, input))
        .map_err(|e| {
            if is_out_of_memory(&e) {
                memory::exhausted();
            }
            Failed::new(format!("cannot start the Starlark interpreter: {e}"))
        })
        .and_then(|thread| {
            thread
                .join()
                .unwrap_or_else(|_| Err(Failed::new("the Starlark interpreter crashed")))
        });
    match outcome {
        Ok(list) => answer(list.as_bytes()),
        Err(failed) => fail(&failed),
    }
}

/// Whether starting a thread failed for want of memory (its stack is
/// counted against the memory limit).
fn is_out_of_memory(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::OutOfMemory
        || matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::ENOMEM))
}

/// Why a `run` request cannot be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum Malformed {
    /// It is not laid out as the exchange says.
    #[error(
        "malformed request: expected the program's length, a line break, the program and the list"
    )]
    Layout,
    /// The program or the list (named) is not UTF-8.
    #[error("malformed request: the {0} is not UTF-8")]
    NotUtf8(&'static str),
}

/// The program and the input list of a `run` request: the program's length
/// in bytes and a line break, the program, then the list.
fn split_request(request: Vec<u8>) -> Result<(String, String), Malformed> {
    let line_end = request
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(Malformed::Layout)?;
    let len: usize = std::str::from_utf8(&request[..line_end])
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(Malformed::Layout)?;
    let rest = &request[line_end + 1..];
    if rest.len() < len {
        return Err(Malformed::Layout);
    }
    let (program, list) = rest.split_at(len);
    let text = |b: &[u8], what: &'static str| {
        String::from_utf8(b.to_vec()).map_err(|_| Malformed::NotUtf8(what))
    };
    Ok((text(program, "program")?, text(list, "list")?))
}

/// Prints `bytes` as the answer: exit status `status` once it is written.
fn answer_with(bytes: &[u8], status: u8) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::from(status),
        Err(e) => {
            eprintln!("{PROGRAM}: cannot write the answer: {e}");
            ExitCode::from(2)
        }
    }
}

/// Prints a successful answer.
fn answer(bytes: &[u8]) -> ExitCode {
    answer_with(bytes, 0)
}

/// Prints why the run failed, as `{"message": …, "results": […]}`.
fn fail(failed: &Failed) -> ExitCode {
    let mut doc = Node::map();
    doc.set("message", Node::string(failed.message.as_str()));
    doc.set(
        "results",
        Node::seq_of(failed.results.iter().map(|r| r.to_node())),
    );
    answer_with(
        krusty_yaml::to_go_json(&doc).as_bytes(),
        PROGRAM_FAILED as u8,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_split_at_the_programs_length() {
        let request = b"9\nprint(1)\n{\"items\": []}".to_vec();
        let (program, list) = split_request(request).unwrap();
        assert_eq!(program, "print(1)\n");
        assert_eq!(list, "{\"items\": []}");
        for bad in [&b"no length"[..], b"x\nprint", b"99\nshort"] {
            assert!(split_request(bad.to_vec()).is_err(), "{bad:?}");
        }
    }
}
