//! The one-call entry point: read a `ResourceList` from stdin, run the
//! author's function over it, write the result to stdout.

use std::io::{Read, Write};
use std::process::ExitCode;

use crate::result::FnResult;
use crate::wire::{ResourceList, WireError};

/// A function's failure: becomes an `error` result and exit code 1.
/// A function returns its own reasons as text (`Err("no team".into())`,
/// or `?` on a `String`); the SDK's own failures keep their cause.
#[derive(Debug, Clone, PartialEq)]
pub enum FnError {
    /// The function's own reason.
    Message(String),
    /// The `functionConfig` does not fit the function's type.
    Config(String),
    /// A `ResourceList` that cannot be read or written.
    Wire(WireError),
    /// Results to report (each with its own severity, references and
    /// message), as [`ResourceList::results`] would hold them: return
    /// `Err(FnResult::error("…").about(item).into())` to stop with a
    /// result that names a resource and a field.
    Results(Vec<FnResult>),
}

impl std::fmt::Display for FnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FnError::Message(m) => f.write_str(m),
            FnError::Config(why) => write!(f, "reading functionConfig: {why}"),
            FnError::Wire(e) => e.fmt(f),
            FnError::Results(results) => {
                let lines: Vec<String> = results.iter().map(FnResult::to_string).collect();
                f.write_str(&lines.join("\n"))
            }
        }
    }
}

impl std::error::Error for FnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FnError::Wire(e) => Some(e),
            _ => None,
        }
    }
}

impl From<String> for FnError {
    fn from(s: String) -> FnError {
        FnError::Message(s)
    }
}

impl From<&str> for FnError {
    fn from(s: &str) -> FnError {
        FnError::Message(s.to_string())
    }
}

impl From<FnResult> for FnError {
    fn from(r: FnResult) -> FnError {
        FnError::Results(vec![r])
    }
}

impl From<Vec<FnResult>> for FnError {
    fn from(r: Vec<FnResult>) -> FnError {
        FnError::Results(r)
    }
}

impl From<crate::path::PathError> for FnError {
    fn from(e: crate::path::PathError) -> FnError {
        FnError::Message(e.to_string())
    }
}

impl From<WireError> for FnError {
    fn from(e: WireError) -> FnError {
        FnError::Wire(e)
    }
}

/// What one run of a function produced: the text for stdout, and the
/// process's exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The output `ResourceList` (empty if the input was unreadable).
    pub stdout: String,
    /// A message for stderr, if any.
    pub stderr: String,
    /// 0 on success; 1 when the input was unreadable, the function failed
    /// or it reported an `error` result.
    pub exit_code: u8,
}

/// Runs `f` over the `ResourceList` in `input`. An error returned by `f`
/// is added as an `error` result (or, for [`FnError::Results`], as the
/// results it holds) and makes the exit code 1; the items are still written, as the
/// specification lets an orchestrator show them.
pub fn process<F>(input: &str, f: F) -> Outcome
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    let mut list = match ResourceList::parse(input) {
        Ok(list) => list,
        Err(e) => {
            return Outcome {
                stdout: String::new(),
                stderr: format!("reading the input ResourceList: {e}\n"),
                exit_code: 1,
            }
        }
    };
    let mut stderr = String::new();
    let outcome = f(&mut list);
    let returned_err = outcome.is_err();
    match outcome {
        Ok(()) => {}
        Err(FnError::Results(results)) => {
            for r in &results {
                stderr.push_str(&format!("{r}\n"));
            }
            list.results.extend(results);
        }
        Err(e) => {
            stderr = format!("{e}\n");
            list.results.push(FnResult::error(e.to_string()));
        }
    }
    let failed = returned_err || list.has_errors();
    match list.to_yaml() {
        Ok(stdout) => Outcome {
            stdout,
            stderr,
            exit_code: u8::from(failed),
        },
        Err(e) => Outcome {
            stdout: String::new(),
            stderr: format!("{stderr}writing the output ResourceList: {e}\n"),
            exit_code: 1,
        },
    }
}

/// The whole `main` of a function: reads stdin, calls `f`, writes stdout
/// and stderr, and returns the exit code.
///
/// ```no_run
/// use krusty_fn::{object, run, ResourceList};
///
/// fn main() -> std::process::ExitCode {
///     run(|list: &mut ResourceList| {
///         for item in &mut list.items {
///             object::set_label(item, "team", "web");
///         }
///         Ok(())
///     })
/// }
/// ```
pub fn run<F>(f: F) -> ExitCode
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    let mut input = String::new();
    let outcome = match std::io::stdin().read_to_string(&mut input) {
        Ok(_) => process(&input, f),
        Err(e) => Outcome {
            stdout: String::new(),
            stderr: format!("reading stdin: {e}\n"),
            exit_code: 1,
        },
    };
    let mut stdout = std::io::stdout().lock();
    let wrote = stdout
        .write_all(outcome.stdout.as_bytes())
        .and_then(|()| stdout.flush());
    let _ = std::io::stderr().write_all(outcome.stderr.as_bytes());
    if wrote.is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::from(outcome.exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n  metadata:\n    name: a\n";

    #[test]
    fn errors_become_results_and_exit_code_one() {
        let out = process(INPUT, |_| Err("no good".into()));
        assert_eq!(out.exit_code, 1);
        assert!(
            out.stdout.contains("message: \"no good\"") || out.stdout.contains("message: no good")
        );
        let out = process(INPUT, |l| {
            l.results.push(FnResult::warning("hm"));
            Ok(())
        });
        assert_eq!(out.exit_code, 0);
        let out = process("kind: Nope\n", |_| Ok(()));
        assert_eq!(out.exit_code, 1);
        assert!(out.stderr.contains("expected kind ResourceList"));
    }
}
