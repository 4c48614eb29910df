//! The `set_labels` example as an executable KRM function, with its
//! KRMFunctionDefinition for `--help` and `--doc`.

fn main() -> std::process::ExitCode {
    krusty_fn::Function::new(krusty_fn_examples::set_labels::transform)
        .definition(include_str!("../../definitions/set-labels.yaml"))
        .run()
}
