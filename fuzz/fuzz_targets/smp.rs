//! Strategic merge: a resource and a patch (separated by a NUL byte) merge
//! without a panic under the built-in Kubernetes schema, and the result is
//! written and read back to the same value.
#![no_main]

use krusty_ops::patch::smp;
use krusty_ops::schema::Schema;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((target, patch)) = krusty_fuzz::split_two(data) else {
        return;
    };
    let (Some(target), Some(mut patch)) = (
        krusty_fuzz::first_root(target),
        krusty_fuzz::first_root(patch),
    ) else {
        return;
    };
    if target.as_map().is_none() || patch.as_map().is_none() {
        return;
    }
    smp::stringify_metadata_maps(&mut patch);
    if let Ok(Some(merged)) = smp::merge(target, patch, Schema::kubernetes()) {
        krusty_fuzz::assert_round_trip(&merged);
    }
});
