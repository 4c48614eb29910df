//! The `configmap_generator` example as an executable KRM function.

fn main() -> std::process::ExitCode {
    krusty_fn::run(krusty_fn_examples::configmap_generator::generate)
}
