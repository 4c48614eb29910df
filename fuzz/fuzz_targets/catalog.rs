//! Function catalogs and standalone function definitions (one reader, for
//! `Catalog`, `KRMFunctionCatalog` and `KRMFunctionDefinition`): any text
//! is read or refused with an error naming a position and field, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = krusty_schema::catalog::parse(text) {
            let _ = e.place_first("catalog.yaml");
        }
    }
});
