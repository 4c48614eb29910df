//! The KRM function wire format: any text is read as a ResourceList or
//! refused with an error, never a panic; a list read is also written and
//! read back with the same items (unless `KRUSTY_FUZZ_PRESERVING=0`).
#![no_main]

use krusty_fn::ResourceList;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(list) = ResourceList::parse(text) else {
        return;
    };
    let Ok(written) = list.to_yaml() else {
        return;
    };
    if !krusty_fuzz::check_preserving() {
        return;
    }
    let again = match ResourceList::parse(&written) {
        Ok(again) => again,
        Err(e) => panic!("written list does not read back: {e}\n{written}"),
    };
    assert_eq!(again.items.len(), list.items.len(), "{written}");
    for (a, b) in list.items.iter().zip(&again.items) {
        assert_eq!(
            krusty_yaml::to_go_json(a),
            krusty_yaml::to_go_json(b),
            "{written}"
        );
    }
});
