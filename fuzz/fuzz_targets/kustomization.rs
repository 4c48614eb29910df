//! Kustomization files: any text is parsed into a Kustomization or refused
//! with an error, never a panic.
#![no_main]

use krusty_schema::KustomizeVersion;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for version in [KustomizeVersion::V5_5_0, KustomizeVersion::V5_8_1] {
            let _ = krusty_schema::Kustomization::parse(text, version);
        }
    }
});
