//! JSON 6902 patches: a resource and an operation list (separated by a NUL
//! byte) are decoded and applied without a panic, and the patched resource
//! is written and read back to the same value.
#![no_main]

use krusty_ops::patch::json6902::JsonPatch;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((target, ops)) = krusty_fuzz::split_two(data) else {
        return;
    };
    let (Some(mut target), Some(ops)) = (
        krusty_fuzz::first_root(target),
        krusty_fuzz::first_root(ops),
    ) else {
        return;
    };
    let Ok(patch) = JsonPatch::from_node(&ops) else {
        return;
    };
    if patch.apply(&mut target).is_ok() {
        krusty_fuzz::assert_round_trip(&target);
    }
});
