//! The `inject_sidecar` example as an executable KRM function.

fn main() -> std::process::ExitCode {
    krusty_fn::run(krusty_fn_examples::inject_sidecar::inject)
}
