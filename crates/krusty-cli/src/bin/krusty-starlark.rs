//! `krusty-starlark`: the Starlark function runtime that `krusty` starts
//! when a build has Starlark functions (see the `krusty-starlark` crate).

use std::process::ExitCode;

/// The system allocator, ending the program with the exit status that
/// tells krusty the memory limit was reached when an allocation fails.
#[global_allocator]
static ALLOCATOR: krusty_starlark::memory::ExitWhenExhausted =
    krusty_starlark::memory::ExitWhenExhausted;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    krusty_starlark::main(&args)
}
