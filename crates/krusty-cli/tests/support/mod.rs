//! Helpers shared by the integration tests (each test crate uses a part).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub mod examples;
pub mod oci;
pub mod podman;
pub mod unix;

/// A fresh directory for one test: `area/name` under Cargo's temporary
/// directory for integration tests.
pub fn scratch(area: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(area).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes `text` to `dir/rel`, creating directories.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
    std::fs::write(path, text).expect("write file");
}

/// Copies the tree `from` into `to` (created when missing): its folders
/// and files, recursively.
pub fn copy_tree(from: &Path, to: &Path) {
    copy_tree_filled(from, to, &|text| text.to_string());
}

/// Copies the tree `from` into `to` as `copy_tree` does, with `fill`
/// applied to each text (UTF-8) file: to put in what placeholders stand
/// for. Other files are copied as they are.
pub fn copy_tree_filled(from: &Path, to: &Path, fill: &dyn Fn(&str) -> String) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read the tree") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree_filled(&entry.path(), &target, fill);
            continue;
        }
        let bytes = std::fs::read(entry.path()).expect("read a file");
        let bytes = match String::from_utf8(bytes) {
            Ok(text) => fill(&text).into_bytes(),
            Err(e) => e.into_bytes(),
        };
        std::fs::write(&target, bytes).expect("write a file");
        let mode = entry.metadata().expect("metadata").permissions();
        std::fs::set_permissions(&target, mode).expect("set permissions");
    }
}

/// The krusty these tests run: every test starts krusty through this
/// command (adding its arguments, folder and environment).
pub fn krusty_command() -> std::process::Command {
    std::process::Command::new(KRUSTY)
}

/// The path of the krusty these tests run.
pub const KRUSTY: &str = env!("CARGO_BIN_EXE_krusty");

/// `krusty ARGS` run in `cwd`, to its end.
pub fn krusty_output(cwd: &Path, args: &[&str]) -> std::process::Output {
    krusty_command()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("krusty runs")
}

/// Bytes a process printed, as text (invalid UTF-8 replaced).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Says loudly, on stderr, that a test or part of one does not run.
pub fn skip(what: &str) {
    eprintln!("\n!!!!!!!! SKIPPED: {what} !!!!!!!!\n");
}

/// `cmd ARGS` runs here and succeeds (its output discarded).
pub fn available(cmd: &str, args: &[&str]) -> bool {
    std::process::Command::new(cmd)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Checks `done` every `every` until it holds or `limit` has passed
/// (the caller asserts what it waited for).
pub fn wait_until(limit: Duration, every: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() && Instant::now() < deadline {
        std::thread::sleep(every);
    }
}

/// Whether process `pid` has ended (a zombie whose parent does not reap
/// it has ended too).
pub fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
    }
}

/// `git` in `dir` with a fixed author and committer and no user or system
/// configuration.
pub fn git_command(dir: &Path) -> std::process::Command {
    let mut git = std::process::Command::new("git");
    git.current_dir(dir)
        .env("GIT_AUTHOR_NAME", "krusty")
        .env("GIT_AUTHOR_EMAIL", "krusty@example.invalid")
        .env("GIT_COMMITTER_NAME", "krusty")
        .env("GIT_COMMITTER_EMAIL", "krusty@example.invalid")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    git
}

/// A bare copy of the repository `work` at `bare` (what was there
/// before removed), for a server to serve.
pub fn bare_clone(work: &Path, bare: &Path) {
    let _ = std::fs::remove_dir_all(bare);
    run(git_command(work)
        .args(["clone", "-q", "--bare"])
        .arg(work)
        .arg(bare));
}

/// A `KRMFunctionDefinition` whose spec is the catalog entry `entry` (an
/// item `  - group: …` of a catalog's `spec.krmFunctions`).
pub fn definition_of(entry: &str) -> String {
    let spec = entry
        .trim_start_matches("  - ")
        .replace("\n    ", "\n  ")
        .replace("group:", "  group:");
    format!("apiVersion: config.kubernetes.io/v1alpha1\nkind: KRMFunctionDefinition\nspec:\n{spec}")
}

/// Lines of context shown around a difference, and the most lines shown.
const CONTEXT: usize = 3;
const MAX_DIFF_LINES: usize = 60;

/// A line diff of `expected` against `actual` (longest common subsequence):
/// `-` lines only expected, `+` lines only printed by krusty, with `CONTEXT`
/// unchanged lines around each change.
pub fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // Edit script: (tag, line, line number in expected).
    let mut ops = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i], i + 1));
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i], i + 1));
            i += 1;
        } else {
            ops.push(('+', b[j], i + 1));
            j += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    if changed.is_empty() {
        return "  (same lines: the difference is in line endings)".into();
    }
    let mut out = Vec::new();
    let mut last = None;
    for (k, (tag, line, n)) in ops.iter().enumerate() {
        if !changed.iter().any(|&c| c.abs_diff(k) <= CONTEXT) {
            continue;
        }
        if last.is_none_or(|l| l + 1 != k) {
            out.push(format!("@@ expected.yaml line {n} @@"));
        }
        last = Some(k);
        out.push(format!("{tag} {line}"));
    }
    if out.len() > MAX_DIFF_LINES {
        let more = out.len() - MAX_DIFF_LINES;
        out.truncate(MAX_DIFF_LINES);
        out.push(format!("  ... {more} more lines"));
    }
    out.join("\n")
}

/// `name` found in a directory of `PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The base seed of a differential test: `KRUSTY_DIFF_SEED` (decimal, or
/// hex with `0x`) when set, else `default`.
pub fn diff_seed(default: u64) -> u64 {
    std::env::var("KRUSTY_DIFF_SEED")
        .ok()
        .and_then(|s| match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        })
        .unwrap_or(default)
}

/// A small deterministic generator (splitmix64 seeding, xorshift64*), so
/// generated trees are the same on every run for a seed.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(z.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `true` `percent` times in a hundred.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// One of `items` (not empty), as a string of the program.
    pub fn pick_str(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }
}

/// Runs `cmd`, failing the test with its output when it fails; its stdout.
pub fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Starts `tests/support/git-http-server.py` with `args` (its port first:
/// `0` for any free one); returns it and the port it listens on. It stops
/// when the returned child (which holds its stdin) is dropped with the
/// test process.
pub fn serve(args: &[&std::ffi::OsStr]) -> (std::process::Child, u16) {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/git-http-server.py");
    let mut child = Command::new("python3")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs the test servers");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().expect("piped"))
        .read_line(&mut line)
        .expect("the server prints its port");
    let port = line.trim().parse().expect("a port number");
    (child, port)
}

/// A throwaway CA (`ca.crt`) and a certificate for 127.0.0.1 and
/// localhost it signed (`server.crt`, `server.key`), made in `dir`.
pub fn make_certificates(dir: &Path) -> PathBuf {
    use std::process::Command;
    std::fs::create_dir_all(dir).expect("mkdir");
    let openssl = |args: &[&str]| {
        run(Command::new("openssl").current_dir(dir).args(args));
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-days",
        "30",
        "-subj",
        "/CN=krusty-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    ]);
    openssl(&ca);
    let mut csr = vec!["req"];
    csr.extend(ec);
    csr.extend([
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    openssl(&csr);
    write(
        dir,
        "server.ext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
    );
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "30",
        "-extfile",
        "server.ext",
        "-out",
        "server.crt",
    ]);
    dir.to_path_buf()
}

/// A command's stdout and stderr as text.
pub fn output_text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// kubectl's message without what changes from run to run: its log
/// prefix, and the names of temporary folders starting `temp_prefix`
/// (their digits become `TMP`).
pub fn stable_message(message: &str, temp_prefix: &str) -> String {
    let message = match message.find("] ") {
        Some(i) if message.starts_with('E') => &message[i + 2..],
        _ => message,
    };
    let mut out = String::new();
    let mut rest = message;
    while let Some(i) = rest.find(temp_prefix) {
        out.push_str(&rest[..i]);
        out.push_str(temp_prefix);
        out.push_str("TMP");
        rest = rest[i + temp_prefix.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// The items of a ResourceList or a stream, each printed in Kustomize's
/// form without the orchestrators' annotations, sorted.
pub fn normalized_items(text: &str) -> Vec<String> {
    let docs = krusty_yaml::parse_stream(text).expect("valid YAML");
    let mut roots: Vec<krusty_yaml::Node> = docs.into_iter().filter_map(|d| d.root).collect();
    if roots.len() == 1 && roots[0].get("kind").and_then(|k| k.as_str()) == Some("ResourceList") {
        roots = roots[0]
            .get("items")
            .and_then(|i| i.as_seq())
            .map(|items| items.to_vec())
            .unwrap_or_default();
    }
    let mut out: Vec<String> = roots
        .into_iter()
        .map(|mut r| {
            if let Some(meta) = r.get_mut("metadata") {
                if let Some(m) = meta.get_mut("annotations").and_then(|a| a.as_map_mut()) {
                    m.retain(|(k, _)| {
                        let k = k.key_str().unwrap_or_default();
                        !k.starts_with("internal.config.kubernetes.io/")
                            && !k.starts_with("config.kubernetes.io/")
                            && !k.starts_with("config.k8s.io/")
                    });
                }
                // kpt leaves an empty mapping where it removed its own.
                if meta
                    .get("annotations")
                    .and_then(|a| a.as_map())
                    .is_some_and(|m| m.is_empty())
                {
                    meta.remove("annotations");
                }
            }
            krusty_yaml::to_kustomize_yaml(&r).expect("emit")
        })
        .collect();
    out.sort();
    out
}

/// The file `krusty build T1 T2 … -o OUTDIR` writes target `target`'s
/// output to (docs/function-servers.md), for targets given without `./`.
pub fn output_name(target: &str) -> String {
    let name: String = target
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    name + ".yaml"
}

/// Runs `cmd` with its stdout and stderr kept in `dir/NAME.stdout` and
/// `dir/NAME.stderr`; panics when it runs longer than `limit`.
pub fn run_bounded(
    cmd: &mut std::process::Command,
    dir: &Path,
    name: &str,
    limit: Duration,
) -> std::process::Output {
    let out_path = dir.join(format!("{name}.stdout"));
    let err_path = dir.join(format!("{name}.stderr"));
    let mut child = cmd
        .stdout(std::fs::File::create(&out_path).expect("creating an output file"))
        .stderr(std::fs::File::create(&err_path).expect("creating an output file"))
        .spawn()
        .expect("spawning a build");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for a build") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{name} did not finish on {} within {limit:?}",
                dir.display()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    std::process::Output {
        status,
        stdout: std::fs::read(&out_path).expect("reading an output file"),
        stderr: std::fs::read(&err_path).expect("reading an output file"),
    }
}

/// The Kustomize releases krusty reproduces, as `--kustomize-version`
/// names them.
pub const KUSTOMIZE_VERSIONS: [&str; 2] = ["v5.5.0", "v5.8.1"];

/// One case of a corpus: a folder of fixture files.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case's folder.
    pub dir: PathBuf,
    /// The folder's name.
    pub name: String,
}

/// The cases of the corpus folder `corpus`: its sub-folders, sorted by
/// name, but for those whose name starts with `_` or `.` (material the
/// cases share). Panics when the folder is missing or holds no case.
pub fn cases(corpus: &Path) -> Vec<Case> {
    let entries = std::fs::read_dir(corpus).unwrap_or_else(|e| panic!("{}: {e}", corpus.display()));
    let mut cases: Vec<Case> = entries
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.is_dir())
        .filter_map(|dir| {
            let name = dir.file_name()?.to_string_lossy().into_owned();
            (!name.starts_with(['_', '.'])).then_some(Case { dir, name })
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(!cases.is_empty(), "no cases in {}", corpus.display());
    cases
}

impl Case {
    /// The path of the case's file `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The text of the case's file `name`, if it has one.
    pub fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.path(name)).ok()
    }

    /// The folder the case builds, relative to its own: its `target`
    /// file's, else `in`.
    pub fn target(&self) -> String {
        self.read("target")
            .map(|t| t.trim().to_string())
            .unwrap_or_else(|| "in".into())
    }

    /// The failure the case expects: its `expected_error.txt`.
    pub fn expected_error(&self) -> Option<ExpectedError> {
        self.read("expected_error.txt")
            .map(|text| ExpectedError::parse(&text))
    }

    /// What the case expects of a build, from the files every release
    /// shares: `expected_error.txt`, else `expected.yaml` and
    /// `expected_stderr.txt`. `None`: it has none of them.
    pub fn expected(&self) -> Option<Expected> {
        self.expected_from("")
    }

    /// What the case expects of a build as Kustomize release `version`:
    /// from the release's own files (`expected_error.VERSION.txt`,
    /// `expected.VERSION.yaml`, `expected_stderr.VERSION.txt`) where the
    /// releases differ, else from the shared ones. A release's own output
    /// or stderr leaves the other shared one in force (but for a shared
    /// error). `None`: no expectation for that release.
    pub fn expected_as(&self, version: &str) -> Option<Expected> {
        self.expected_from(&format!(".{version}"))
    }

    fn expected_from(&self, release: &str) -> Option<Expected> {
        let bytes = |name: &str| std::fs::read(self.path(name)).ok();
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        if let Some(error) = bytes(&format!("expected_error{release}.txt")) {
            return Some(Expected::Error(ExpectedError::parse(&text(error))));
        }
        let own_stdout = bytes(&format!("expected{release}.yaml"));
        let own_stderr = bytes(&format!("expected_stderr{release}.txt")).map(text);
        if own_stdout.is_none() && own_stderr.is_none() {
            if let Some(shared) = self.expected_error() {
                return Some(Expected::Error(shared));
            }
        }
        let stdout = own_stdout.or_else(|| bytes("expected.yaml"));
        let stderr = own_stderr.or_else(|| bytes("expected_stderr.txt").map(text));
        if stdout.is_none() && stderr.is_none() {
            return None;
        }
        Some(Expected::Output { stdout, stderr })
    }
}

/// What a case expects of a krusty run.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// It works: the exact stdout and the exact stderr, each where the
    /// case pins it.
    Output {
        stdout: Option<Vec<u8>>,
        stderr: Option<String>,
    },
    /// It fails (`expected_error.txt`).
    Error(ExpectedError),
}

/// A failure a case expects: the text of its `expected_error.txt`, a part
/// of krusty's stderr (trailing newlines aside). The file may start with
/// a line `#! SETTING…` that says more:
/// - `exit=N`: krusty exits with status N (else any failure does);
/// - `exact`: the rest of the file is all of krusty's stderr, byte for
///   byte, not a part of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedError {
    pub text: String,
    pub exit: Option<i32>,
    pub exact: bool,
}

impl ExpectedError {
    /// The expectation written in an `expected_error.txt` holding `file`.
    pub fn parse(file: &str) -> ExpectedError {
        let mut want = ExpectedError {
            text: file.trim_end_matches('\n').to_string(),
            exit: None,
            exact: false,
        };
        if let Some((header, rest)) = file.strip_prefix("#! ").and_then(|f| f.split_once('\n')) {
            for setting in header.split_whitespace() {
                match setting.strip_prefix("exit=") {
                    Some(n) => want.exit = Some(n.parse().expect("exit=N: a number")),
                    None if setting == "exact" => want.exact = true,
                    None => panic!("unknown setting {setting:?} in expected_error.txt"),
                }
            }
            want.text = if want.exact {
                rest.to_string()
            } else {
                rest.trim_end_matches('\n').to_string()
            };
        }
        want
    }

    /// The file that says this expectation (what `parse` reads back).
    pub fn file(&self) -> String {
        let mut header = Vec::new();
        if let Some(exit) = self.exit {
            header.push(format!("exit={exit}"));
        }
        if self.exact {
            header.push("exact".to_string());
        }
        let header = match header.is_empty() {
            true => String::new(),
            false => format!("#! {}\n", header.join(" ")),
        };
        match self.exact {
            true => format!("{header}{}", self.text),
            false => format!("{header}{}\n", self.text),
        }
    }

    /// Checks a failed run (its exit status, stdout and stderr); `Err`
    /// says how it differs.
    pub fn check(&self, exit: Option<i32>, stdout: &[u8], stderr: &str) -> Result<(), String> {
        match (exit, self.exit) {
            (Some(0), _) => {
                return Err(format!(
                    "expected an error containing {:?}, got success",
                    self.text
                ))
            }
            (got, Some(want)) if got != Some(want) => {
                return Err(format!("exit status {got:?}, expected {want}"))
            }
            _ => {}
        }
        if !stdout.is_empty() {
            return Err(format!("failed, but printed to stdout:\n{}", text(stdout)));
        }
        if self.exact {
            if stderr != self.text {
                return Err(format!("stderr differs\n{}", diff(&self.text, stderr)));
            }
        } else if !stderr.contains(self.text.as_str()) {
            return Err(format!(
                "stderr lacks {:?}:\n{}",
                self.text,
                stderr.trim_end()
            ));
        }
        Ok(())
    }
}

impl Expected {
    /// The same expectation with `fill` applied to its texts (to put in
    /// what a case's placeholders stand for).
    pub fn filled(self, fill: impl Fn(&str) -> String) -> Expected {
        match self {
            Expected::Output { stdout, stderr } => Expected::Output {
                stdout: stdout.map(|s| fill(&String::from_utf8_lossy(&s)).into_bytes()),
                stderr: stderr.map(|s| fill(&s)),
            },
            Expected::Error(e) => Expected::Error(ExpectedError {
                text: fill(&e.text),
                ..e
            }),
        }
    }

    /// The same expectation, a build that works printing nothing on
    /// stderr unless the case pins what it prints.
    pub fn quiet(self) -> Expected {
        match self {
            Expected::Output { stdout, stderr } => Expected::Output {
                stdout,
                stderr: Some(stderr.unwrap_or_default()),
            },
            error => error,
        }
    }

    /// Checks a run of krusty; `Err` says how it differs.
    pub fn check(&self, out: &std::process::Output) -> Result<(), String> {
        self.check_run(out.status.code(), &out.stdout, &text(&out.stderr))
    }

    /// Checks a run given as its exit status (`None`: killed), stdout and
    /// stderr (made portable by the caller where it must be).
    pub fn check_run(&self, exit: Option<i32>, stdout: &[u8], stderr: &str) -> Result<(), String> {
        let (want_stdout, want_stderr) = match self {
            Expected::Error(error) => return error.check(exit, stdout, stderr),
            Expected::Output { stdout, stderr } => (stdout, stderr),
        };
        if exit != Some(0) {
            return Err(format!("failed ({exit:?}): {}", stderr.trim_end()));
        }
        if let Some(bytes) = want_stdout {
            if stdout != bytes.as_slice() {
                return Err(format!(
                    "output differs\n{}",
                    diff(&String::from_utf8_lossy(bytes), &text(stdout))
                ));
            }
        }
        if let Some(want) = want_stderr {
            if stderr != want {
                return Err(format!("stderr differs\n{}", diff(want, stderr)));
            }
        }
        Ok(())
    }
}

/// `text` with each folder's absolute path (as given and canonical)
/// written as its name (`$CASE`, …), in the order given (a folder inside
/// another first), so that a message reads the same
/// wherever the repository or the scratch folder is.
pub fn portable(text: &str, folders: &[(&Path, &str)]) -> String {
    let mut text = text.to_string();
    for (dir, name) in folders {
        if let Ok(real) = dir.canonicalize() {
            text = text.replace(&*real.to_string_lossy(), name);
        }
        text = text.replace(&*dir.to_string_lossy(), name);
    }
    text
}

/// The `kubectl` whose `kubectl kustomize` is Kustomize release `version`:
/// for v5.5.0 the one on `PATH` (kubectl v1.32); for v5.8.1
/// `$KRUSTY_TEST_KUBECTL_V5_8_1`, else `target/kubectl-v1.37/kubectl`
/// (`.ci/run` puts kubectl v1.37.1 there). `None` when it is not there.
pub fn kubectl_for(version: &str) -> Option<PathBuf> {
    match version {
        "v5.5.0" => find_in_path("kubectl"),
        _ => std::env::var_os("KRUSTY_TEST_KUBECTL_V5_8_1")
            .map(PathBuf::from)
            .or_else(|| {
                Some(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("../../target/kubectl-v1.37/kubectl"),
                )
            })
            .filter(|p| p.is_file()),
    }
}
