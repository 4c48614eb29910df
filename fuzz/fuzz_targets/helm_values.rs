//! Helm fields and values: a kustomization's `helmCharts`/`helmGlobals`
//! (first part) are read strictly, and each chart's inline values are
//! merged with a values file (second part) in every `valuesMerge` mode;
//! each step returns or errs, never panics.
#![no_main]

use krusty_build::helm::values;
use krusty_schema::helm as config;
use krusty_schema::KustomizeVersion;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((fields, file)) = krusty_fuzz::split_two(data) else {
        return;
    };
    let Some(root) = krusty_fuzz::first_root(fields) else {
        return;
    };
    if let Some(globals) = root.get("helmGlobals") {
        let _ = config::read_globals(globals);
    }
    let Some(charts) = root.get("helmCharts") else {
        return;
    };
    // Each release reads its own field list; both must hold.
    let _ = config::read_charts(charts, KustomizeVersion::V5_5_0);
    let Ok(charts) = config::read_charts(charts, KustomizeVersion::V5_8_1) else {
        return;
    };
    for chart in &charts {
        let _ = chart.to_yaml();
        let Some(inline) = &chart.values_inline else {
            continue;
        };
        for mode in [values::Merge::Override, values::Merge::Merge, values::Merge::Replace] {
            let _ = values::merged(inline, mode, || Ok(file.to_string()));
        }
    }
});
