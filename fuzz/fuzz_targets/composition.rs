//! Composition files: any text is read as a composition or refused with an
//! error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = krusty_build::composition::check(std::path::Path::new("composition.yaml"), text);
    }
});
