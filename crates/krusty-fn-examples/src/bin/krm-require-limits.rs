//! The `require_limits` example as an executable KRM function.

fn main() -> std::process::ExitCode {
    krusty_fn::run(krusty_fn_examples::require_limits::validate)
}
