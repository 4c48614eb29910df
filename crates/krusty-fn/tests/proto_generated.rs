//! The checked-in Rust code for `proto/krm/function/v2/function.proto`
//! (`src/grpc/krm.function.v2.rs`) is what the proto compiles to: no
//! build script, no protoc, nothing downloaded at build time.
//! `KRUSTY_FN_REGENERATE=1 cargo test -p krusty-fn --test proto_generated`
//! rewrites it after a change to the proto.

use std::path::{Path, PathBuf};

const GENERATED: &str = "src/grpc/krm.function.v2.rs";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generate(out: &Path) {
    let proto = crate_dir().join("proto");
    let fds = protox::compile(["krm/function/v2/function.proto"], [&proto])
        .unwrap_or_else(|e| panic!("compiling the proto: {e:?}"));
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .out_dir(out)
        .compile_fds(fds)
        .unwrap_or_else(|e| panic!("generating the Rust code: {e}"));
}

#[test]
fn generated_code_matches_the_proto() {
    let out = std::env::temp_dir().join(format!("krusty-fn-proto-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    generate(&out);
    let fresh = std::fs::read_to_string(out.join("krm.function.v2.rs")).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    let path = crate_dir().join(GENERATED);
    if std::env::var_os("KRUSTY_FN_REGENERATE").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "{GENERATED} is stale: run KRUSTY_FN_REGENERATE=1 cargo test -p krusty-fn --test proto_generated"
    );
}
