//! A transformer configured by a plain `ConfigMap` (kpt's convention for
//! simple functions): every key of its `data` becomes an annotation on
//! every resource (local configuration aside).
//!
//! ```yaml
//! apiVersion: v1
//! kind: ConfigMap
//! metadata:
//!   name: owners
//! data:
//!   example.com/owner: platform
//!   example.com/tier: "1"
//! ```

use std::collections::BTreeMap;

use krusty_fn::select::not_local_config;
use krusty_fn::{FnError, FnResult, KubeObject, ResourceList};

/// Sets the annotations of the ConfigMap's `data`.
pub fn transform(list: &mut ResourceList) -> Result<(), FnError> {
    let data: BTreeMap<String, String> = list.config_data()?;
    if data.is_empty() {
        return Err("data: at least one annotation is required".into());
    }
    let mut count = 0;
    for item in list.select_mut(not_local_config()) {
        for (k, v) in &data {
            item.set_annotation(k, v);
        }
        count += 1;
    }
    list.results.push(FnResult::info(format!(
        "set {} annotations on {count} resources",
        data.len()
    )));
    Ok(())
}
