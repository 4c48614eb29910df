//! `crds:` files: OpenAPI definitions whose properties carry Kubernetes
//! extensions that declare name references, label selectors and identity
//! fields of custom kinds.

use krusty_resource::Gvk;
use krusty_yaml::Node;

use crate::config::{NameBackRef, TransformerConfig};
use crate::error::OpResult;
use crate::fieldspec::{merge_one, FieldSpec};

const LABEL_SELECTOR: &str = "x-kubernetes-label-selector";
const IDENTITY: &str = "x-kubernetes-identity";
const REF_VERSION: &str = "x-kubernetes-object-ref-api-version";
const REF_KIND: &str = "x-kubernetes-object-ref-kind";
const REF_NAME_KEY: &str = "x-kubernetes-object-ref-name-key";

/// Reads a map of definition name → `{Schema: ..., Dependencies: ...}`
/// into a transformer configuration.
pub fn config_from_definitions(defs: &Node) -> OpResult<TransformerConfig> {
    let mut config = TransformerConfig::default();
    let Some(entries) = defs.as_map() else {
        return Ok(config);
    };
    for (name, def) in entries {
        let name = name.key_str().unwrap_or_default();
        let props = def.get_path(&["Schema", "properties"]);
        let looks_like_object = props.is_some_and(|p| {
            ["kind", "apiVersion", "metadata"]
                .iter()
                .all(|k| p.get(k).is_some())
        });
        if !looks_like_object {
            continue;
        }
        let gvk = Gvk {
            kind: name.rsplit('.').next().unwrap_or(name).into(),
            ..Gvk::default()
        };
        let mut stack = vec![name.to_string()];
        walk(&mut config, &gvk, defs, name, &mut Vec::new(), &mut stack)?;
    }
    Ok(config)
}

fn walk(
    config: &mut TransformerConfig,
    gvk: &Gvk,
    defs: &Node,
    type_name: &str,
    path: &mut Vec<String>,
    stack: &mut Vec<String>,
) -> OpResult<()> {
    let Some(props) = defs
        .get(type_name)
        .and_then(|d| d.get_path(&["Schema", "properties"]))
        .and_then(Node::as_map)
    else {
        return Ok(());
    };
    for (prop_name, prop) in props {
        path.push(prop_name.key_str().unwrap_or_default().to_string());
        let spec = |extra: Option<&str>| {
            let mut p = path.join("/");
            if let Some(e) = extra {
                p = format!("{p}/{e}");
            }
            FieldSpec {
                gvk: gvk.clone(),
                path: p,
                create: false,
            }
        };
        if prop.get(LABEL_SELECTOR).is_some() {
            merge_one(&mut config.common_labels, spec(None))?;
        }
        if prop.get(IDENTITY).is_some() {
            merge_one(&mut config.name_prefix, spec(None))?;
        }
        if let (Some(version), Some(kind)) = (
            prop.get(REF_VERSION).and_then(Node::as_str),
            prop.get(REF_KIND).and_then(Node::as_str),
        ) {
            let name_key = prop
                .get(REF_NAME_KEY)
                .and_then(Node::as_str)
                .unwrap_or("name");
            let back_ref = NameBackRef {
                gvk: Gvk {
                    group: Default::default(),
                    version: version.into(),
                    kind: kind.into(),
                },
                referrers: vec![spec(Some(name_key))],
            };
            let mut one = TransformerConfig::default();
            one.name_reference.push(back_ref);
            config.merge(&one)?;
        }
        if let Some(reference) = prop.get("$ref").and_then(Node::as_str) {
            if !stack.iter().any(|s| s == reference) {
                stack.push(reference.to_string());
                walk(config, gvk, defs, reference, path, stack)?;
                stack.pop();
            }
        }
        path.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_references_become_name_references() {
        let text = r#"{
          "a.v1.Thing": {"Schema": {"properties": {
            "apiVersion": {}, "kind": {}, "metadata": {},
            "spec": {"$ref": "a.v1.ThingSpec"}}}},
          "a.v1.ThingSpec": {"Schema": {"properties": {
            "secretRef": {"x-kubernetes-object-ref-api-version": "v1",
                          "x-kubernetes-object-ref-kind": "Secret"}}}}
        }"#;
        let node = crate::test_support::node(text);
        let c = config_from_definitions(&node).unwrap();
        assert_eq!(c.name_reference.len(), 1);
        assert_eq!(c.name_reference[0].gvk.kind, "Secret");
        assert_eq!(c.name_reference[0].referrers[0].path, "spec/secretRef/name");
        assert_eq!(c.name_reference[0].referrers[0].gvk.kind, "Thing");
    }
}
