//! `krusty-starlark`: the Starlark function runtime that `krusty` starts
//! when a build has Starlark functions (see the `krusty-starlark` crate).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    krusty_starlark::main(&args)
}
