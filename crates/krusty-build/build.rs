//! Embeds the official function catalog named by the build-time setting
//! `KRUSTY_OFFICIAL_CATALOG` (a path to a catalog file); without it, the
//! build has no official catalog.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=KRUSTY_OFFICIAL_CATALOG");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let embedded = out.join("official-catalog.yaml");
    let text = match std::env::var_os("KRUSTY_OFFICIAL_CATALOG") {
        Some(path) if !path.is_empty() => {
            println!("cargo:rerun-if-changed={}", PathBuf::from(&path).display());
            std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "KRUSTY_OFFICIAL_CATALOG={}: {e}",
                    PathBuf::from(&path).display()
                )
            })
        }
        _ => String::new(),
    };
    std::fs::write(&embedded, text).expect("write the embedded catalog");
}
