//! A generator: renders a template (minijinja, Jinja2's syntax) with the
//! functionConfig as its data and adds the resources it prints (an item
//! with the same apiVersion, kind, namespace and name is replaced).
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
//! ```

use krusty_fn::config::to_json_value;
use krusty_fn::{FnError, FnResult, ResourceList};
use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    values: serde_json::Value,
    template: String,
}

/// Renders the template and adds what it prints.
pub fn generate(list: &mut ResourceList) -> Result<(), FnError> {
    let config: Config = list.config()?;
    if config.template.trim().is_empty() {
        return Err("template: a template is required".into());
    }
    let mut env = Environment::new();
    // A misspelt value is an error, not an empty string.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_template("template", &config.template)
        .map_err(|e| FnError::Message(format!("template: {e}")))?;
    let whole = list
        .function_config
        .as_ref()
        .map(to_json_value)
        .unwrap_or_default();
    let text = env
        .get_template("template")
        .and_then(|t| {
            t.render(minijinja::context! {
                values => Value::from(Serde(&config.values)),
                config => Value::from(Serde(&whole)),
            })
        })
        .map_err(|e| FnError::Message(format!("template: {e}")))?;
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
    list.results
        .push(FnResult::info(format!("rendered {count} resources")));
    Ok(())
}
