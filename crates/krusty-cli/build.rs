//! Links the `krusty` executable at a fixed address (not position
//! independent) on Linux: the loader then has no relocations to apply at
//! start-up (about 39,000, and 140 page faults, on every run), which is
//! 0.4 ms of each short build (docs/performance.md).

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
