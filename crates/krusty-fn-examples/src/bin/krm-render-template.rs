//! The `render_template` example as an executable KRM function.

fn main() -> std::process::ExitCode {
    krusty_fn::run(krusty_fn_examples::render_template::generate)
}
