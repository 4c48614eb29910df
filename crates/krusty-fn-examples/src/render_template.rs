//! A generator and patcher: renders a template (minijinja, Jinja2's
//! syntax) with the functionConfig as its data and adds the resources it
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
use krusty_fn::{strategic_merge, FnError, FnResult, ResourceList, Selector};
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    values: serde_json::Value,
    template: String,
    patches: Vec<PatchTemplate>,
}

/// A patch rendered for, and merged into, every item its selector chooses.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PatchTemplate {
    selector: Selector,
    template: String,
}

/// A JSON value as the template sees it. Converted field by field rather
/// than through serde, so that numbers stay numbers whatever features
/// serde_json is built with (`arbitrary_precision` serializes them as maps).
fn template_value(value: &serde_json::Value) -> Value {
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
                .collect::<std::collections::BTreeMap<String, Value>>(),
        ),
    }
}

fn template_error(what: &str, e: minijinja::Error) -> FnError {
    FnError::Message(format!("{what}: {e}"))
}

/// Renders the template and adds what it prints, then applies the patch
/// templates.
pub fn generate(list: &mut ResourceList) -> Result<(), FnError> {
    let config: Config = list.config()?;
    if config.template.trim().is_empty() && config.patches.is_empty() {
        return Err("template or patches: a template is required".into());
    }
    let mut env = Environment::new();
    // A misspelt value is an error, not an empty string.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_template("template", &config.template)
        .map_err(|e| template_error("template", e))?;
    for (i, p) in config.patches.iter().enumerate() {
        env.add_template_owned(format!("patches[{i}]"), p.template.clone())
            .map_err(|e| template_error(&format!("patches[{i}].template"), e))?;
    }
    let whole = list
        .function_config
        .as_ref()
        .map(to_json_value)
        .unwrap_or_default();
    let (values, whole) = (template_value(&config.values), template_value(&whole));
    let text = env
        .get_template("template")
        .and_then(|t| {
            t.render(minijinja::context! { values => values.clone(), config => whole.clone() })
        })
        .map_err(|e| template_error("template", e))?;
    let items = krusty_fn::parse_objects(&text)
        .map_err(|e| FnError::Message(format!("the rendered template is not YAML: {e}")))?;
    if let Some(i) = items.iter().position(|n| n.as_map().is_none()) {
        return Err(format!(
            "the rendered template's document {} is not an object",
            i + 1
        )
        .into());
    }
    let count = items.len();
    for item in items {
        list.upsert(item);
    }
    if count > 0 {
        list.results
            .push(FnResult::info(format!("rendered {count} resources")));
    }
    let mut results = Vec::new();
    for (i, p) in config.patches.iter().enumerate() {
        let name = format!("patches[{i}]");
        let template = env
            .get_template(&name)
            .map_err(|e| template_error(&name, e))?;
        for item in list.select_mut(p.selector.compile()?) {
            let context = minijinja::context! {
                values => values.clone(),
                config => whole.clone(),
                item => template_value(&to_json_value(item)),
            };
            let text = template
                .render(context)
                .map_err(|e| template_error(&name, e))?;
            let patch = krusty_fn::parse_object(&text)
                .map_err(|e| FnError::Message(format!("{name} is not YAML: {e}")))?;
            strategic_merge(item, patch);
            results.push(FnResult::info(format!("applied {name}")).about(item));
        }
    }
    list.results.extend(results);
    Ok(())
}
