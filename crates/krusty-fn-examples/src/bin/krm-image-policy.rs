//! The `image_policy` example as an executable KRM function, with its
//! KRMFunctionDefinition for `--help` and `--doc`.

fn main() -> std::process::ExitCode {
    krusty_fn::Function::new(krusty_fn_examples::image_policy::validate)
        .definition(include_str!("../../definitions/image-policy.yaml"))
        .run()
}
