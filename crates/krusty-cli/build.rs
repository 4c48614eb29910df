//! Links the `krusty` executable at a fixed address (not position
//! independent) on Linux: the loader then has no relocations to apply at
//! start-up, which short builds feel (docs/performance.md has the
//! figures).

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
