//! The `image_policy` example as an executable KRM function.

fn main() -> std::process::ExitCode {
    krusty_fn::run(krusty_fn_examples::image_policy::validate)
}
