//! The YAML reader and both writers: any input is read without a panic,
//! and every document read is written and read back to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(docs) = krusty_yaml::parse_stream(text) else {
        return;
    };
    for root in docs.iter().filter_map(|d| d.root.as_ref()) {
        krusty_fuzz::assert_round_trip(root);
    }
});
