//! A generator and patcher built on the SDK's
//! [`TemplateProcessor`](krusty_fn::template::TemplateProcessor): renders
//! a template (Jinja2's syntax) with the functionConfig as its data and adds the resources it
//! prints (an item with the same apiVersion, kind, namespace and name is
//! replaced); renders each patch template for every item its selector
//! chooses (the template also sees the item as `item`) and applies it as
//! a strategic merge.
//!
//! ```yaml
//! apiVersion: fn.krusty.dev/v1
//! kind: RenderTemplate
//! metadata:
//!   name: team
//! values:                         # the template sees `values` and `config`
//!   team: web
//!   envs: [dev, prod]
//! template: |
//!   {% for env in values.envs %}
//!   ---
//!   apiVersion: v1
//!   kind: Namespace
//!   metadata:
//!     name: {{ values.team }}-{{ env }}
//!   {% endfor %}
//! patches:
//! - selector: {kind: Deployment}
//!   template: |
//!     metadata:
//!       labels:
//!         team: {{ values.team }}
//!     spec:
//!       template:
//!         spec:
//!           containers:
//!           - name: {{ item.spec.template.spec.containers[0].name }}
//!             resources: {limits: {memory: 128Mi}}
//! ```

use krusty_fn::config::to_json_value;
use krusty_fn::template::{PatchTemplate, TemplateProcessor};
use krusty_fn::{FnError, ResourceList};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    values: serde_json::Value,
    template: String,
    patches: Vec<PatchTemplate>,
}

/// Renders the template and adds what it prints, then applies the patch
/// templates; reports what it did as info results.
pub fn generate(list: &mut ResourceList) -> Result<(), FnError> {
    let config: Config = list.config()?;
    if config.template.trim().is_empty() && config.patches.is_empty() {
        return Err("template or patches: a template is required".into());
    }
    let whole = list
        .function_config
        .as_ref()
        .map(to_json_value)
        .unwrap_or_default();
    let processor = TemplateProcessor {
        resource_templates: vec![config.template],
        patch_templates: config.patches,
        ..TemplateProcessor::default()
    };
    let data = serde_json::json!({ "values": config.values, "config": whole });
    let report = processor.run(list, &data)?;
    list.results.extend(report);
    Ok(())
}
