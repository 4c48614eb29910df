//! The `set_annotations` example as an executable KRM function.

fn main() -> std::process::ExitCode {
    krusty_fn::run(krusty_fn_examples::set_annotations::transform)
}
