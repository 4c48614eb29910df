//! The one-call entry point: read a `ResourceList` from stdin, run the
//! author's function over it, write the result to stdout.

use std::io::{Read, Write};
use std::process::ExitCode;

use crate::result::FnResult;
use crate::wire::{ResourceList, WireError};

/// A function's failure: becomes an `error` result and exit code 1.
/// A function returns its own reasons as text (`Err("no team".into())`,
/// or `?` on a `String`, or on an error of the SDK's other calls or of
/// `krusty-match`); the SDK's own reading and writing failures keep their
/// cause.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FnError {
    /// The function's own reason.
    #[error("{0}")]
    Message(String),
    /// The `functionConfig` does not fit the function's type.
    #[error("reading functionConfig: {0}")]
    Config(String),
    /// A `ResourceList` that cannot be read or written.
    #[error("{0}")]
    Wire(#[source] WireError),
    /// Results to report (each with its own severity, references and
    /// message), as [`ResourceList::results`] would hold them: return
    /// `Err(FnResult::error("…").about(item).into())` to stop with a
    /// result that names a resource and a field.
    #[error("{}", .0.iter().map(FnResult::to_string).collect::<Vec<_>>().join("\n"))]
    Results(Vec<FnResult>),
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

/// Errors of the SDK's other calls and of `krusty-match`, as the
/// function's own reason (their message), so that `?` works on them in a
/// function.
macro_rules! message_from {
    ($($error:ty),* $(,)?) => {
        $(
            impl From<$error> for FnError {
                fn from(e: $error) -> FnError {
                    FnError::Message(e.to_string())
                }
            }
        )*
    };
}

message_from!(
    RunError,
    crate::result::ResultError,
    crate::testing::TestError,
    krusty_match::RegexError,
    krusty_match::SelectorError,
);
#[cfg(feature = "grpc")]
message_from!(crate::serve::AddressError);
#[cfg(feature = "server")]
message_from!(crate::serve::ServeError);

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
    let Evaluated { stderr, failed } = evaluate(&mut list, f);
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

/// What running a function over a parsed list reported besides the list.
pub(crate) struct Evaluated {
    /// The text for stderr: the function's failure, one line per result
    /// it returned as an error.
    pub(crate) stderr: String,
    /// The function returned an error or the list holds an `error` result.
    pub(crate) failed: bool,
}

/// Runs `f` over `list`, turning a returned error into results: the one
/// processing step of every mode (stdin, standalone, HTTP, gRPC).
pub(crate) fn evaluate<F>(list: &mut ResourceList, f: F) -> Evaluated
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    let mut stderr = String::new();
    let outcome = f(list);
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
    Evaluated {
        stderr,
        failed: returned_err || list.has_errors(),
    }
}

/// The whole `main` of a function: reads stdin, calls `f`, writes stdout
/// and stderr, and returns the exit code.
///
/// Given arguments, the program runs standalone instead, for trying a
/// function by hand: `my-fn CONFIG.yaml [RESOURCES.yaml…]` reads the
/// functionConfig from the first file and the resources from the others
/// (or from stdin when there are none, or for `-`), prints the resulting
/// resources as a YAML stream on stdout and the results on stderr.
/// `my-fn --help` prints how to run it; `my-fn --doc` says the function
/// has no definition to document: attach one with
/// [`Function::definition`].
///
/// Started with `--http-addr ADDR` or `--grpc-addr ADDR` (or, without
/// arguments, with `KRM_FUNCTION_HTTP_ADDRESS` or
/// `KRM_FUNCTION_GRPC_ADDRESS` set), the program is a specification v2
/// server instead: it answers ResourceLists over HTTP or gRPC until
/// SIGTERM or SIGINT (feature `server`, on by default; see
/// [`crate::serve`]). `f` is then called for many lists, concurrently,
/// hence `Fn + Send + Sync`.
///
/// `run(f)` is `Function::new(f).run()`.
///
/// ```no_run
/// use krusty_fn::{run, KubeObject, ResourceList};
///
/// fn main() -> std::process::ExitCode {
///     run(|list: &mut ResourceList| {
///         for item in &mut list.items {
///             item.set_label("team", "web");
///         }
///         Ok(())
///     })
/// }
/// ```
pub fn run<F>(f: F) -> ExitCode
where
    F: Fn(&mut ResourceList) -> Result<(), FnError> + Send + Sync + 'static,
{
    Function::new(f).run()
}

/// A function with what its executable says about itself: [`run`] with
/// a `KRMFunctionDefinition` (KEP-2906) attached, so that `--help` starts
/// with the function's kind and description and `--doc` prints its
/// reference (its config's fields, from the definition's schema).
///
/// ```no_run
/// fn set_team(list: &mut krusty_fn::ResourceList) -> Result<(), krusty_fn::FnError> {
///     Ok(())
/// }
///
/// // Usually include_str!("../definition.yaml").
/// const DEFINITION: &str = "
/// apiVersion: config.kubernetes.io/v1alpha1
/// kind: KRMFunctionDefinition
/// spec:
///   group: example.com
///   names: {kind: SetTeam}
///   description: Sets the team label.
///   versions:
///   - name: v1
///     schema:
///       openAPIV3Schema:
///         type: object
///         properties:
///           team: {type: string}
/// ";
///
/// fn main() -> std::process::ExitCode {
///     krusty_fn::Function::new(set_team).definition(DEFINITION).run()
/// }
/// ```
///
/// The definition is read only by `--help` and `--doc`; one that cannot
/// be read is an error there (exit code 1) naming the field, never in a
/// run. Check it in a test with [`crate::definition::Definition::parse`].
pub struct Function<F> {
    f: F,
    definition: Option<String>,
}

impl<F> Function<F>
where
    F: Fn(&mut ResourceList) -> Result<(), FnError> + Send + Sync + 'static,
{
    /// The function `f`, with no definition.
    pub fn new(f: F) -> Function<F> {
        Function {
            f,
            definition: None,
        }
    }

    /// Attaches the function's `KRMFunctionDefinition` (YAML or JSON
    /// text), usually `include_str!("../definition.yaml")`.
    #[must_use]
    pub fn definition(mut self, text: impl Into<String>) -> Function<F> {
        self.definition = Some(text.into());
        self
    }

    /// The whole `main`: as [`run`], with `--help` and `--doc` from the
    /// definition.
    pub fn run(self) -> ExitCode {
        let args: Vec<String> = std::env::args().collect();
        let rest = args.get(1..).unwrap_or_default();
        let program = program_name(args.first().map_or("function", String::as_str));
        let protocol = PackagedProtocol::from_env(std::env::var(PROTOCOL_ENV).ok().as_deref());
        let outcome = match server_addresses(rest, |name| std::env::var(name).ok()) {
            Err(message) => failure(message),
            Ok(Some(addresses)) => match protocol.and_then(PackagedProtocol::allows_serving) {
                Ok(()) => return serve(addresses, self.f),
                Err(message) => failure(message),
            },
            Ok(None) => match rest.first().map(String::as_str) {
                None => match protocol.and_then(PackagedProtocol::allows_stdin) {
                    Ok(()) => match read_stdin() {
                        Ok(input) => process(&input, self.f),
                        Err(e) => failure(e),
                    },
                    Err(message) => failure(message),
                },
                Some(flag @ ("-h" | "--help" | "--doc")) if rest.len() == 1 => {
                    describe(&program, flag, self.definition.as_deref())
                }
                Some(_) => standalone(rest, self.f),
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
}

/// The exit code of `--doc` for a function without a definition: 2, as
/// for a usage error, so a script tells it from a failed run (1).
pub const NO_DEFINITION_EXIT_CODE: u8 = 2;

/// What `program --help` (`flag` `-h` or `--help`) or `program --doc`
/// prints for a function with `definition`:
///
/// - `--help`: the definition's kind, apiVersions and description, then
///   the usage; exit code 0. A definition that cannot be read leaves the
///   usage alone on stdout and its error on stderr, exit code 1.
/// - `--doc`: the reference generated from the definition, exit code 0;
///   without a definition, a message on stderr and exit code
///   [`NO_DEFINITION_EXIT_CODE`]; an unreadable one, its error and 1.
pub fn describe(program: &str, flag: &str, definition: Option<&str>) -> Outcome {
    use crate::definition::Definition;
    let parsed = definition.map(Definition::parse);
    let invalid = |e: &crate::definition::DefinitionError| {
        format!("{program}: the function's definition cannot be read: {e}\n")
    };
    match (flag, parsed) {
        ("--doc", None) => Outcome {
            stdout: String::new(),
            stderr: format!(
                "{program}: this function has no KRMFunctionDefinition to document \
                 (its author attaches one with krusty_fn::Function::new(f).definition(…)); \
                 --help shows how to run it\n"
            ),
            exit_code: NO_DEFINITION_EXIT_CODE,
        },
        ("--doc", Some(Ok(d))) => Outcome {
            stdout: d.reference(),
            stderr: String::new(),
            exit_code: 0,
        },
        (_, Some(Err(e))) => Outcome {
            stdout: if flag == "--doc" {
                String::new()
            } else {
                usage(program)
            },
            stderr: invalid(&e),
            exit_code: 1,
        },
        (_, Some(Ok(d))) => Outcome {
            stdout: format!("{}\n{}", d.help_header(), usage(program)),
            stderr: String::new(),
            exit_code: 0,
        },
        (_, None) => Outcome {
            stdout: usage(program),
            stderr: String::new(),
            exit_code: 0,
        },
    }
}

/// The environment variable an image sets to say which KRM function
/// specification its executable answers (`scripts/package.sh --protocol`):
/// `v1` (stdin only: `--http-addr`, `--grpc-addr` and their variables are
/// refused), `v2` (a server only: a run reading stdin is refused) or
/// `both`. Unset: whatever the arguments ask for. `--help`, `--doc` and
/// the standalone mode work whatever it says.
pub const PROTOCOL_ENV: &str = "KRUSTY_FN_PROTOCOL";

/// The value of [`PROTOCOL_ENV`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackagedProtocol {
    /// Specification v1 only: a ResourceList on stdin.
    V1,
    /// Specification v2 only: a server.
    V2,
    /// Either (also when unset).
    Both,
}

impl PackagedProtocol {
    /// Reads the variable's value (`None`, or empty: `Both`); an unknown
    /// value is an error naming it.
    pub fn from_env(value: Option<&str>) -> Result<PackagedProtocol, RunError> {
        match value.unwrap_or("").trim() {
            "" | "both" => Ok(PackagedProtocol::Both),
            "v1" => Ok(PackagedProtocol::V1),
            "v2" => Ok(PackagedProtocol::V2),
            other => Err(RunError::UnknownProtocol(other.to_string())),
        }
    }

    fn allows_serving(self) -> Result<(), RunError> {
        match self {
            PackagedProtocol::V1 => Err(RunError::V1Only),
            _ => Ok(()),
        }
    }

    fn allows_stdin(self) -> Result<(), RunError> {
        match self {
            PackagedProtocol::V2 => Err(RunError::V2Only),
            _ => Ok(()),
        }
    }
}

/// Why a function's arguments or environment ask for no mode it can run
/// in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// [`PROTOCOL_ENV`] has a value other than `v1`, `v2` and `both` (the
    /// value).
    #[error("{PROTOCOL_ENV}={0:?}: unknown protocol (expected v1, v2 or both)")]
    UnknownProtocol(String),
    /// A server address given to a function packaged for specification v1
    /// only.
    #[error(
        "this function is packaged for KRM function specification v1 only \
         ({PROTOCOL_ENV}=v1): it reads a ResourceList on stdin and does not serve \
         {} or {}",
        HTTP_ADDRESS.0,
        GRPC_ADDRESS.0
    )]
    V1Only,
    /// A run reading stdin of a function packaged for specification v2
    /// only.
    #[error(
        "this function is packaged for KRM function specification v2 only \
         ({PROTOCOL_ENV}=v2): start it with {} ADDR or {} ADDR; it does not read a \
         ResourceList on stdin (package it with --protocol both for that)",
        HTTP_ADDRESS.0,
        GRPC_ADDRESS.0
    )]
    V2Only,
    /// A server flag with no address after it (the flag).
    #[error("{0} needs an address (host:port or unix:///path)")]
    NoAddress(String),
    /// Server flags and other arguments together (the first other one).
    #[error(
        "{} and {} take no other arguments, got {:?}",
        HTTP_ADDRESS.0,
        GRPC_ADDRESS.0,
        .0
    )]
    ArgumentsBesideServer(String),
}

/// Why the standalone mode has no input list.
#[derive(Debug, thiserror::Error)]
enum InputError {
    /// Stdin cannot be read.
    #[error("reading stdin: {0}")]
    Stdin(#[source] std::io::Error),
    /// A file cannot be read.
    #[error("{path}: {source}")]
    Read {
        /// The file as given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// No argument names the functionConfig.
    #[error("no functionConfig file")]
    NoConfig,
    /// A file is not YAML, or (the functionConfig's) holds no object.
    #[error("{path}: {source}")]
    Objects {
        /// The file as given.
        path: String,
        /// Why.
        source: FnError,
    },
    /// A resource file holds a `ResourceList` that cannot be read.
    #[error("{path}: {source}")]
    List {
        /// The file as given.
        path: String,
        /// Why.
        source: WireError,
    },
    /// The list cannot be written.
    #[error(transparent)]
    Write(WireError),
}

/// The name the program was started by, without its directory.
fn program_name(arg0: &str) -> String {
    std::path::Path::new(arg0)
        .file_name()
        .map_or_else(|| arg0.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The flag and the environment variable naming the HTTP server's address.
pub const HTTP_ADDRESS: (&str, &str) = ("--http-addr", "KRM_FUNCTION_HTTP_ADDRESS");
/// The flag and the environment variable naming the gRPC server's address.
pub const GRPC_ADDRESS: (&str, &str) = ("--grpc-addr", "KRM_FUNCTION_GRPC_ADDRESS");

/// The addresses a function is asked to serve on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerAddresses {
    /// The HTTP server's address (`host:port` or `unix:///path`).
    pub http: Option<String>,
    /// The gRPC server's address.
    pub grpc: Option<String>,
}

/// The server addresses in the arguments (`--http-addr ADDR`,
/// `--grpc-addr=ADDR`) or, for each flag absent, in its environment
/// variable (read through `env`). The variables count only when the
/// arguments hold a flag or nothing at all: a program given files runs
/// standalone. `None`: no server asked for (specification v1).
pub fn server_addresses(
    args: &[String],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<ServerAddresses>, RunError> {
    let mut flags = ServerAddresses::default();
    let mut others = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (arg.as_str(), None),
        };
        let slot = match name {
            n if n == HTTP_ADDRESS.0 => &mut flags.http,
            n if n == GRPC_ADDRESS.0 => &mut flags.grpc,
            _ => {
                others.push(arg);
                continue;
            }
        };
        let value = inline
            .or_else(|| args.next().cloned())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| RunError::NoAddress(name.to_string()))?;
        *slot = Some(value);
    }
    let flagged = flags.http.is_some() || flags.grpc.is_some();
    if flagged && !others.is_empty() {
        return Err(RunError::ArgumentsBesideServer(others[0].clone()));
    }
    if !flagged && !others.is_empty() {
        return Ok(None);
    }
    let from_env = |name: &str| env(name).filter(|v| !v.is_empty());
    let addresses = ServerAddresses {
        http: flags.http.or_else(|| from_env(HTTP_ADDRESS.1)),
        grpc: flags.grpc.or_else(|| from_env(GRPC_ADDRESS.1)),
    };
    Ok((addresses.http.is_some() || addresses.grpc.is_some()).then_some(addresses))
}

#[cfg(feature = "server")]
fn serve<F>(addresses: ServerAddresses, f: F) -> ExitCode
where
    F: Fn(&mut ResourceList) -> Result<(), FnError> + Send + Sync + 'static,
{
    match crate::serve::serve(&addresses, f) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "server"))]
fn serve<F>(_: ServerAddresses, _: F) -> ExitCode {
    let _ = writeln!(
        std::io::stderr(),
        "this function cannot serve: it was built without krusty-fn's `server` feature"
    );
    ExitCode::FAILURE
}

fn read_stdin() -> Result<String, InputError> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(InputError::Stdin)?;
    Ok(input)
}

fn failure(message: impl std::fmt::Display) -> Outcome {
    Outcome {
        stdout: String::new(),
        stderr: format!("{message}\n"),
        exit_code: 1,
    }
}

fn usage(program: &str) -> String {
    format!(
        "A KRM function: reads a ResourceList on stdin and prints it, changed, on stdout.\n\n\
         Usage:\n  {program} < resource-list.yaml\n  {program} CONFIG [RESOURCES...]\n  \
         {program} [--http-addr ADDR] [--grpc-addr ADDR]\n  {program} --help | --doc\n\n\
         With arguments, CONFIG is the functionConfig and RESOURCES the files holding the\n\
         resources (stdin when none are given, or for '-'); the resources are printed as\n\
         a YAML stream, the results on stderr.\n\n\
         With --http-addr or --grpc-addr (or KRM_FUNCTION_HTTP_ADDRESS or\n\
         KRM_FUNCTION_GRPC_ADDRESS), it serves ResourceLists over HTTP or gRPC\n\
         (KRM function specification v2) until SIGTERM or SIGINT; ADDR is\n\
         host:port or unix:///path.\n\n\
         --doc prints the function's reference (its config's fields) from its\n\
         KRMFunctionDefinition, when it was built with one.\n"
    )
}

/// The standalone mode of [`run`]: `args` are the config file and the
/// resource files.
pub fn standalone<F>(args: &[String], f: F) -> Outcome
where
    F: FnOnce(&mut ResourceList) -> Result<(), FnError>,
{
    match standalone_input(args) {
        Ok(input) => {
            let out = process(&input, f);
            match ResourceList::parse(&out.stdout) {
                Ok(list) => standalone_output(&list, out.stderr, out.exit_code),
                Err(_) => out,
            }
        }
        Err(e) => failure(e),
    }
}

fn standalone_input(args: &[String]) -> Result<String, InputError> {
    let read = |path: &str| -> Result<String, InputError> {
        if path == "-" {
            return read_stdin();
        }
        std::fs::read_to_string(path).map_err(|source| InputError::Read {
            path: path.to_string(),
            source,
        })
    };
    let (config_path, resources) = args.split_first().ok_or(InputError::NoConfig)?;
    let config =
        crate::parse_object(&read(config_path)?).map_err(|source| InputError::Objects {
            path: config_path.clone(),
            source,
        })?;
    let mut items = Vec::new();
    let stdin = ["-".to_string()];
    for path in if resources.is_empty() {
        &stdin[..]
    } else {
        resources
    } {
        let text = read(path)?;
        let mut docs = crate::parse_objects(&text).map_err(|source| InputError::Objects {
            path: path.clone(),
            source,
        })?;
        // A whole ResourceList contributes its items.
        if docs.len() == 1
            && docs[0].get("kind").and_then(krusty_yaml::Node::as_str) == Some("ResourceList")
        {
            let list =
                ResourceList::from_node(docs.remove(0)).map_err(|source| InputError::List {
                    path: path.clone(),
                    source,
                })?;
            items.extend(list.items);
        } else {
            items.extend(docs);
        }
    }
    let mut list = ResourceList::new(items);
    list.function_config = Some(config);
    list.to_yaml().map_err(InputError::Write)
}

fn standalone_output(list: &ResourceList, mut stderr: String, exit_code: u8) -> Outcome {
    let mut stdout = String::new();
    for (i, item) in list.items.iter().enumerate() {
        if i > 0 {
            stdout.push_str("---\n");
        }
        match krusty_yaml::to_yaml_preserving(item) {
            Ok(text) => stdout.push_str(&text),
            Err(e) => return failure(e.to_string()),
        }
    }
    // Results the function returned as an Err are on stderr already.
    for r in &list.results {
        let line = format!("{r}\n");
        if !stderr.contains(&line) {
            stderr.push_str(&line);
        }
    }
    Outcome {
        stdout,
        stderr,
        exit_code,
    }
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

    #[test]
    fn server_flags_win_over_the_environment() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let env = |name: &str| match name {
            "KRM_FUNCTION_HTTP_ADDRESS" => Some("unix:///env.sock".to_string()),
            _ => None,
        };
        let none = |_: &str| None;
        let both = ServerAddresses {
            http: Some("127.0.0.1:1".into()),
            grpc: Some("unix:///g.sock".into()),
        };
        assert_eq!(
            server_addresses(
                &args(&["--http-addr", "127.0.0.1:1", "--grpc-addr=unix:///g.sock"]),
                env
            ),
            Ok(Some(both))
        );
        let grpc_and_env = ServerAddresses {
            http: Some("unix:///env.sock".into()),
            grpc: Some(":2".into()),
        };
        assert_eq!(
            server_addresses(&args(&["--grpc-addr", ":2"]), env),
            Ok(Some(grpc_and_env))
        );
        let from_env = ServerAddresses {
            http: Some("unix:///env.sock".into()),
            grpc: None,
        };
        assert_eq!(server_addresses(&[], env), Ok(Some(from_env)));
        assert_eq!(server_addresses(&[], none), Ok(None));
        // Files given: standalone, whatever the environment says.
        assert_eq!(server_addresses(&args(&["config.yaml"]), env), Ok(None));
        assert!(server_addresses(&args(&["--http-addr"]), none).is_err());
        assert!(server_addresses(&args(&["--http-addr", ":1", "config.yaml"]), none).is_err());
    }

    #[test]
    fn help_and_doc_come_from_the_definition() {
        let def = "kind: KRMFunctionDefinition\nspec:\n  group: example.com\n  names: {kind: SetTeam}\n  description: Sets the team.\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          team: {type: string}\n";
        let help = describe("set-team", "--help", Some(def));
        assert_eq!(help.exit_code, 0);
        assert!(
            help.stdout
                .starts_with("SetTeam (example.com/v1)\n\nSets the team.\n\nA KRM function:"),
            "{}",
            help.stdout
        );
        assert!(help.stdout.contains("  set-team --help | --doc\n"));
        let doc = describe("set-team", "--doc", Some(def));
        assert_eq!(doc.exit_code, 0);
        assert!(doc.stdout.contains("    team: string\n"), "{}", doc.stdout);
        // No definition: the usage alone, and --doc says there is none.
        assert_eq!(describe("f", "-h", None).stdout, usage("f"));
        let none = describe("f", "--doc", None);
        assert_eq!(none.exit_code, NO_DEFINITION_EXIT_CODE);
        assert_eq!(none.stdout, "");
        assert!(
            none.stderr.contains("no KRMFunctionDefinition"),
            "{}",
            none.stderr
        );
        // A wrong one: the error names the field; --help still shows the usage.
        let wrong = "kind: KRMFunctionDefinition\nspec: {names: {kind: [A]}}\n";
        let help = describe("f", "--help", Some(wrong));
        assert_eq!(help.exit_code, 1);
        assert_eq!(help.stdout, usage("f"));
        assert_eq!(
            help.stderr,
            "f: the function's definition cannot be read: KRMFunctionDefinition, spec.names.kind (line 2): expected a string, got a list\n"
        );
        let doc = describe("f", "--doc", Some(wrong));
        assert_eq!((doc.exit_code, doc.stdout.as_str()), (1, ""));
    }

    #[test]
    fn argument_errors_say_what_is_wrong() {
        for (error, text) in [
            (
                RunError::V1Only,
                "this function is packaged for KRM function specification v1 only \
                 (KRUSTY_FN_PROTOCOL=v1): it reads a ResourceList on stdin and does not serve \
                 --http-addr or --grpc-addr",
            ),
            (
                RunError::V2Only,
                "this function is packaged for KRM function specification v2 only \
                 (KRUSTY_FN_PROTOCOL=v2): start it with --http-addr ADDR or --grpc-addr ADDR; \
                 it does not read a ResourceList on stdin (package it with --protocol both for \
                 that)",
            ),
            (
                RunError::UnknownProtocol("v3".into()),
                "KRUSTY_FN_PROTOCOL=\"v3\": unknown protocol (expected v1, v2 or both)",
            ),
        ] {
            assert_eq!(error.to_string(), text);
        }
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let none = |_: &str| None;
        assert_eq!(
            server_addresses(&args(&["--http-addr"]), none)
                .unwrap_err()
                .to_string(),
            "--http-addr needs an address (host:port or unix:///path)"
        );
        assert_eq!(
            server_addresses(&args(&["--grpc-addr=:1", "config.yaml"]), none)
                .unwrap_err()
                .to_string(),
            "--http-addr and --grpc-addr take no other arguments, got \"config.yaml\""
        );
        let failed = standalone(&[], |_: &mut ResourceList| Ok(()));
        assert_eq!(failed.stderr, "no functionConfig file\n");
        let missing = standalone(
            &args(&["/nonexistent/fn-config.yaml"]),
            |_: &mut ResourceList| Ok(()),
        );
        assert!(
            missing.stderr.starts_with("/nonexistent/fn-config.yaml: "),
            "{}",
            missing.stderr
        );
    }

    #[test]
    fn the_packaged_protocol_refuses_the_other_mode() {
        use PackagedProtocol::*;
        assert_eq!(PackagedProtocol::from_env(None), Ok(Both));
        assert_eq!(PackagedProtocol::from_env(Some("")), Ok(Both));
        assert_eq!(PackagedProtocol::from_env(Some("v1")), Ok(V1));
        assert_eq!(PackagedProtocol::from_env(Some("v2")), Ok(V2));
        let err = PackagedProtocol::from_env(Some("v3"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"v3\"") && err.contains(PROTOCOL_ENV),
            "{err}"
        );
        assert!(V1.allows_stdin().is_ok() && V1.allows_serving().is_err());
        assert!(V2.allows_serving().is_ok());
        assert!(V2
            .allows_stdin()
            .unwrap_err()
            .to_string()
            .contains("--http-addr ADDR"));
        assert!(Both.allows_stdin().is_ok() && Both.allows_serving().is_ok());
        assert_eq!(program_name("/usr/bin/krm-x"), "krm-x");
    }

    #[test]
    fn standalone_reads_files_and_prints_a_stream() {
        let dir = std::env::temp_dir().join(format!("krusty-fn-standalone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("config.yaml");
        let resources = dir.join("r.yaml");
        std::fs::write(&config, "kind: X\nmetadata: {name: x}\ndata: {team: web}\n").unwrap();
        std::fs::write(
            &resources,
            "kind: A # a\nmetadata:\n  name: a\n---\nkind: B\nmetadata:\n  name: b\n",
        )
        .unwrap();
        let args = [
            config.display().to_string(),
            resources.display().to_string(),
        ];
        let out = standalone(&args, |l| {
            let team: String = l.config::<serde_json::Value>()?["data"]["team"]
                .as_str()
                .unwrap_or("")
                .into();
            for item in &mut l.items {
                crate::KubeObject::set_label(item, "team", &team);
            }
            l.results.push(FnResult::warning("careful"));
            Ok(())
        });
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(out.stdout, "kind: A # a\nmetadata:\n  name: a\n  labels:\n    team: web\n---\nkind: B\nmetadata:\n  name: b\n  labels:\n    team: web\n");
        assert_eq!(out.stderr, "[warning]: careful\n");
        assert_eq!(out.exit_code, 0);
        let out = standalone(&["/nonexistent.yaml".to_string()], |_| Ok(()));
        assert_eq!(out.exit_code, 1);
        assert!(out.stderr.contains("/nonexistent.yaml"), "{}", out.stderr);
    }
}
