//! A transformer: sets labels at field specs, as Kustomize's label
//! transformer does, on the resources its selector chooses.
//!
//! ```yaml
//! apiVersion: fn.krusty.dev/v1
//! kind: SetLabels
//! metadata:
//!   name: team
//! labels:
//!   team: web
//! selector:               # a patch target; default: every resource
//!   kind: Deployment|StatefulSet
//!   labelSelector: tier in (web, api)
//! fieldSpecs:             # default: metadata/labels of every resource
//! - path: metadata/labels
//!   create: true
//! - kind: Deployment
//!   path: spec/template/metadata/labels
//!   create: true
//! ```

use std::collections::BTreeMap;

use krusty_fn::{object, FnError, ResourceList, Selector};
use krusty_fn::{Node, Value};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    labels: BTreeMap<String, String>,
    #[serde(rename = "fieldSpecs")]
    field_specs: Vec<FieldSpec>,
    selector: Selector,
}

/// Where to set the labels: resources of a group/version/kind (empty
/// matches all) and a `/`-separated path (lists are walked through).
#[derive(Deserialize, Default, Clone)]
#[serde(default)]
struct FieldSpec {
    group: String,
    version: String,
    kind: String,
    path: String,
    create: bool,
}

impl FieldSpec {
    fn matches(&self, item: &Node) -> bool {
        let api_version = object::get_str(item, &["apiVersion"]);
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        (self.group.is_empty() || self.group == group)
            && (self.version.is_empty() || self.version == version)
            && (self.kind.is_empty() || self.kind == object::get_str(item, &["kind"]))
    }
}

/// Sets the configured labels on every matching item.
pub fn transform(list: &mut ResourceList) -> Result<(), FnError> {
    let mut config: Config = list.config()?;
    if config.labels.is_empty() {
        return Err("labels: at least one label is required".into());
    }
    if config.field_specs.is_empty() {
        config.field_specs.push(FieldSpec {
            path: "metadata/labels".into(),
            create: true,
            ..FieldSpec::default()
        });
    }
    let selector = config.selector.compile()?;
    for item in list.select_mut(selector) {
        let matching: Vec<&FieldSpec> = config
            .field_specs
            .iter()
            .filter(|s| s.matches(item))
            .collect();
        for spec in matching {
            let path: Vec<&str> = spec.path.split('/').filter(|p| !p.is_empty()).collect();
            set_at(item, &path, spec.create, &config.labels);
        }
    }
    Ok(())
}

/// Walks `path` from `node` (through every element of a list) and adds
/// the labels to the mapping at its end.
fn set_at(node: &mut Node, path: &[&str], create: bool, labels: &BTreeMap<String, String>) {
    match path.split_first() {
        None => {
            if node.is_null() {
                *node = Node::map();
            }
            if node.as_map().is_some() {
                for (k, v) in labels {
                    node.set(k, Node::string(v));
                }
            }
        }
        Some((key, rest)) => match &mut node.value {
            Value::Seq(items) => {
                for item in items {
                    set_at(item, path, create, labels);
                }
            }
            Value::Map(_) => {
                if node.get(key).is_none() {
                    if !create {
                        return;
                    }
                    node.set(key, Node::map());
                }
                if let Some(next) = node.get_mut(key) {
                    set_at(next, rest, create, labels);
                }
            }
            Value::Scalar(_) => {}
        },
    }
}
