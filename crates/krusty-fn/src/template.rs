//! Generating and patching items from templates (Jinja2's syntax, by
//! minijinja), with data the function chooses — usually its
//! `functionConfig` — as the templates' names. kyaml's framework calls
//! this a `TemplateProcessor`; this is the same idea with the feature
//! `templates` (on by default).
//!
//! - **Resource templates** render a stream of YAML documents; each
//!   becomes an item (an item with the same apiVersion, kind, namespace
//!   and name is replaced).
//! - **Patch templates** render once for every item their selector
//!   chooses (the template also sees the item as `item`), and are merged
//!   into it as a strategic merge ([`strategic_merge`]).
//! - **Container patch templates** render once for every container of
//!   every workload their selector chooses (`item` and `container`), and
//!   are merged into that container.
//!
//! A name the data does not hold is an error, not an empty string.
//!
//! ```
//! use krusty_fn::template::{PatchTemplate, TemplateProcessor};
//! use krusty_fn::{ResourceList, Selector};
//!
//! let mut list = ResourceList::default();
//! let processor = TemplateProcessor {
//!     resource_templates: vec![
//!         "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ team }}\n".into(),
//!     ],
//!     patch_templates: vec![PatchTemplate {
//!         selector: Selector { kind: "Namespace".into(), ..Selector::default() },
//!         template: "metadata:\n  labels:\n    owner: {{ team }}\n".into(),
//!     }],
//!     ..TemplateProcessor::default()
//! };
//! processor.run(&mut list, &serde_json::json!({"team": "web"})).unwrap();
//! assert_eq!(list.items.len(), 1);
//! ```

use std::collections::BTreeMap;

use minijinja::{Environment, UndefinedBehavior, Value};

use crate::config::to_json_value;
use crate::patch::strategic_merge;
use crate::result::FnResult;
use crate::run::FnError;
use crate::select::Selector;
use crate::wire::ResourceList;
use crate::Node;

/// A template rendered for, and merged into, what its selector chooses.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct PatchTemplate {
    /// The items it applies to (a patch target: kind, name, labels…).
    pub selector: Selector,
    /// The template of the patch.
    pub template: String,
}

/// Resource, patch and container patch templates, run in that order.
#[derive(Debug, Clone, Default)]
pub struct TemplateProcessor {
    /// Templates of items to add (streams of YAML documents).
    pub resource_templates: Vec<String>,
    /// Templates of patches merged into chosen items.
    pub patch_templates: Vec<PatchTemplate>,
    /// Templates of patches merged into every container of chosen items.
    pub container_patch_templates: Vec<PatchTemplate>,
}

/// The container lists of the workload kinds, by path.
const CONTAINER_LISTS: [&[&str]; 3] = [
    &["spec", "template", "spec"],
    &["spec", "jobTemplate", "spec", "template", "spec"],
    &["spec"],
];

impl TemplateProcessor {
    /// Renders the templates with `data` (a JSON object: its keys are the
    /// templates' names) and applies them to `list`. Returns an info result
    /// for each resource template that rendered items and for each item a
    /// patch template was merged into (the function decides whether to
    /// report them).
    pub fn run(
        &self,
        list: &mut ResourceList,
        data: &serde_json::Value,
    ) -> Result<Vec<FnResult>, FnError> {
        let names = match template_value(data) {
            v if v.kind() == minijinja::value::ValueKind::Map => v,
            _ => return Err("the templates' data must be an object".into()),
        };
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        let templates = self
            .resource_templates
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("resource_templates[{i}]"), t))
            .chain(self.patches("patch_templates", &self.patch_templates))
            .chain(self.patches("container_patch_templates", &self.container_patch_templates));
        for (name, text) in templates {
            env.add_template_owned(name.clone(), text.clone())
                .map_err(|e| template_error(&name, e))?;
        }
        let mut report = Vec::new();
        for i in 0..self.resource_templates.len() {
            let name = format!("resource_templates[{i}]");
            let items = parse_items(&name, &render(&env, &name, names.clone())?)?;
            if !items.is_empty() {
                report.push(FnResult::info(format!(
                    "{name} rendered {} items",
                    items.len()
                )));
            }
            for item in items {
                list.upsert(item);
            }
        }
        for (i, patch) in self.patch_templates.iter().enumerate() {
            let name = format!("patch_templates[{i}]");
            for item in list.select_mut(patch.selector.compile()?) {
                let context = with(&names, &[("item", template_value(&to_json_value(item)))]);
                let patch = parse_patch(&name, &render(&env, &name, context)?)?;
                strategic_merge(item, patch);
                report.push(FnResult::info(format!("applied {name}")).about(item));
            }
        }
        for (i, patch) in self.container_patch_templates.iter().enumerate() {
            let name = format!("container_patch_templates[{i}]");
            for item in list.select_mut(patch.selector.compile()?) {
                let seen = template_value(&to_json_value(item));
                for container in containers(item) {
                    let context = with(
                        &names,
                        &[
                            ("item", seen.clone()),
                            ("container", template_value(&to_json_value(container))),
                        ],
                    );
                    let patch = parse_patch(&name, &render(&env, &name, context)?)?;
                    strategic_merge(container, patch);
                }
                report.push(FnResult::info(format!("applied {name}")).about(item));
            }
        }
        Ok(report)
    }

    /// The named patch templates of one list.
    fn patches<'a>(
        &self,
        list: &'a str,
        patches: &'a [PatchTemplate],
    ) -> impl Iterator<Item = (String, &'a String)> + 'a {
        patches
            .iter()
            .enumerate()
            .map(move |(i, p)| (format!("{list}[{i}]"), &p.template))
    }
}

/// Renders the items of one template with `data` (see
/// [`TemplateProcessor::run`]).
pub fn render_items(template: &str, data: &serde_json::Value) -> Result<Vec<Node>, FnError> {
    let mut list = ResourceList::default();
    TemplateProcessor {
        resource_templates: vec![template.to_string()],
        ..TemplateProcessor::default()
    }
    .run(&mut list, data)?;
    Ok(list.items)
}

/// `names` with `extra` names added.
fn with(names: &Value, extra: &[(&str, Value)]) -> Value {
    let mut map: BTreeMap<String, Value> = names
        .try_iter()
        .into_iter()
        .flatten()
        .filter_map(|k| {
            let v = names.get_item(&k).ok()?;
            Some((k.as_str()?.to_string(), v))
        })
        .collect();
    for (k, v) in extra {
        map.insert(k.to_string(), v.clone());
    }
    Value::from(map)
}

fn render(env: &Environment<'_>, name: &str, context: Value) -> Result<String, FnError> {
    env.get_template(name)
        .and_then(|t| t.render(context))
        .map_err(|e| template_error(name, e))
}

fn template_error(name: &str, e: minijinja::Error) -> FnError {
    FnError::Message(format!("{name}: {e}"))
}

/// The documents a resource template rendered, each an object.
fn parse_items(name: &str, text: &str) -> Result<Vec<Node>, FnError> {
    let items = crate::parse_objects(text)
        .map_err(|e| FnError::Message(format!("{name} did not render YAML: {e}")))?;
    if let Some(i) = items.iter().position(|n| n.as_map().is_none()) {
        return Err(format!("{name}: rendered document {} is not an object", i + 1).into());
    }
    Ok(items)
}

/// The patch a patch template rendered.
fn parse_patch(name: &str, text: &str) -> Result<Node, FnError> {
    let patch = crate::parse_object(text)
        .map_err(|e| FnError::Message(format!("{name} did not render YAML: {e}")))?;
    if patch.as_map().is_none() {
        return Err(format!("{name}: the rendered patch is not an object").into());
    }
    Ok(patch)
}

/// The containers (and init containers) of a workload, wherever its kind
/// keeps its pod spec.
fn containers(item: &mut Node) -> Vec<&mut Node> {
    let Some(path) = CONTAINER_LISTS.iter().find(|path| {
        let mut at: Option<&Node> = Some(item);
        for key in path.iter() {
            at = at.and_then(|n| n.get(key));
        }
        at.is_some_and(|spec| spec.get("containers").is_some())
    }) else {
        return Vec::new();
    };
    let mut spec: &mut Node = item;
    for key in path.iter() {
        match spec.get_mut(key) {
            Some(next) => spec = next,
            None => return Vec::new(),
        }
    }
    let Some(map) = spec.as_map_mut() else {
        return Vec::new();
    };
    map.iter_mut()
        .filter(|(k, _)| matches!(k.key_str(), Some("containers" | "initContainers")))
        .filter_map(|(_, list)| list.as_seq_mut())
        .flat_map(|list| list.iter_mut())
        .collect()
}

/// A JSON value as templates see it. Converted value by value rather than
/// through serde, so that numbers stay numbers whatever features
/// serde_json is built with (`arbitrary_precision` writes them as maps).
pub fn template_value(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::from(()),
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::from(i),
            (None, Some(u), _) => Value::from(u),
            (None, None, Some(f)) => Value::from(f),
            _ => Value::from(n.to_string()),
        },
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => {
            Value::from(items.iter().map(template_value).collect::<Vec<Value>>())
        }
        serde_json::Value::Object(map) => Value::from(
            map.iter()
                .map(|(k, v)| (k.clone(), template_value(v)))
                .collect::<BTreeMap<String, Value>>(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KubeObject;

    fn list(text: &str) -> ResourceList {
        ResourceList {
            items: crate::parse_objects(text).unwrap(),
            ..ResourceList::default()
        }
    }

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n      - name: log\n        image: fluent\n";

    #[test]
    fn resource_templates_add_and_replace_items() {
        let mut l = list(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web-dev\n  labels: {old: x}\n",
        );
        let processor = TemplateProcessor {
            resource_templates: vec!["{% for env in envs %}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ team }}-{{ env }}\n{% endfor %}\n".into()],
            ..TemplateProcessor::default()
        };
        processor
            .run(
                &mut l,
                &serde_json::json!({"team": "web", "envs": ["dev", "prod"]}),
            )
            .unwrap();
        let names: Vec<&str> = l.items.iter().map(|i| i.name()).collect();
        assert_eq!(names, ["web-dev", "web-prod"]);
        assert!(l.items[0].label("old").is_none(), "replaced, not merged");
    }

    #[test]
    fn patch_templates_see_the_item_and_merge_strategically() {
        let mut l = list(DEPLOYMENT);
        let processor = TemplateProcessor {
            patch_templates: vec![PatchTemplate {
                selector: Selector {
                    kind: "Deployment".into(),
                    ..Selector::default()
                },
                template: "metadata:\n  labels:\n    app: {{ item.metadata.name }}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:{{ version }}\n".into(),
            }],
            ..TemplateProcessor::default()
        };
        processor
            .run(&mut l, &serde_json::json!({"version": "1.25"}))
            .unwrap();
        let d = &l.items[0];
        assert_eq!(d.label("app"), Some("web"));
        assert_eq!(
            d.field_str("spec.template.spec.containers[name=app].image")
                .unwrap(),
            Some("nginx:1.25")
        );
        assert_eq!(
            d.field_str("spec.template.spec.containers[1].image")
                .unwrap(),
            Some("fluent")
        );
    }

    #[test]
    fn container_patch_templates_patch_every_container() {
        let mut l = list(DEPLOYMENT);
        let processor = TemplateProcessor {
            container_patch_templates: vec![PatchTemplate {
                selector: Selector::default(),
                template: "env:\n- name: POD_CONTAINER\n  value: {{ container.name }}-{{ zone }}\n"
                    .into(),
            }],
            ..TemplateProcessor::default()
        };
        processor
            .run(&mut l, &serde_json::json!({"zone": "eu"}))
            .unwrap();
        for (i, name) in ["app", "log"].iter().enumerate() {
            let path = format!("spec.template.spec.containers[{i}].env[0].value");
            assert_eq!(
                l.items[0].field_str(&path).unwrap(),
                Some(format!("{name}-eu").as_str())
            );
        }
    }

    #[test]
    fn an_unknown_name_or_bad_output_is_an_error_naming_the_template() {
        let err = render_items("name: {{ missing }}", &serde_json::json!({})).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("resource_templates[0]: undefined value"),
            "{err}"
        );
        let err = render_items("- a\n- b\n", &serde_json::json!({})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "resource_templates[0]: rendered document 1 is not an object"
        );
        let err = render_items("a: b", &serde_json::json!([1])).unwrap_err();
        assert_eq!(err.to_string(), "the templates' data must be an object");
    }
}
