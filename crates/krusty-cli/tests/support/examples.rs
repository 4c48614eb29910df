//! The SDK's example functions (`crates/krusty-fn-examples`) as the tests
//! run them: their executables, built beside krusty, and their golden
//! fixtures (`tests/fixtures/<function>/<case>`).

use std::path::{Path, PathBuf};

/// An example function's executable, built beside krusty; fails the test,
/// saying how to build it, when it is missing.
pub fn example(name: &str) -> PathBuf {
    let path = Path::new(super::KRUSTY)
        .parent()
        .expect("bin dir")
        .join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build -p krusty-fn-examples` first (or `cargo test --workspace`)",
        path.display()
    );
    path
}

/// The folder of the examples' fixture case `case` (`<function>/<case>`).
pub fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../krusty-fn-examples/tests/fixtures")
        .join(case)
}

/// The text of `path`, failing the test with the path when it does not read.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
