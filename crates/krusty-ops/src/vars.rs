//! Vars (`vars:`, deprecated but still used): `$(NAME)` references in the
//! fields `varReference` specs name, replaced at the end of the build with a
//! field of the resource the var's `objref` names.

use krusty_resource::{ResId, ResMap, Resource};
use krusty_yaml::{resolve_input, Node, Resolved, ScalarStyle, Tag, Value};

use crate::error::{OpError, OpResult};
use crate::fieldspec::{self, CreateKind, FieldSpec};
use crate::path;

pub use krusty_schema::var::{read_vars, Var};

/// How a var appears in messages.
trait Described {
    /// `e`, located where the var is declared (when known).
    fn locate(&self, e: OpError) -> OpError;

    /// Kustomize's `%v` form, `{NAME Kind.version.group {fieldpath}}`.
    fn describe(&self, field_path: &str) -> String;
}

impl Described for Var {
    fn locate(&self, e: OpError) -> OpError {
        e.located(self.written_at.0.as_deref(), self.written_at.1)
    }

    fn describe(&self, field_path: &str) -> String {
        format!("{{{} {} {{{field_path}}}}}", self.name, self.target_gvk())
    }
}

/// The vars of a build so far, each name once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VarSet(Vec<Var>);

impl VarSet {
    /// Adds vars, failing on a name already present.
    pub fn merge(&mut self, incoming: &[Var]) -> OpResult<()> {
        for var in incoming {
            if self.0.iter().any(|v| v.name == var.name) {
                return Err(var.locate(OpError::new(format!(
                    "var '{}' already encountered",
                    var.name
                ))));
            }
            self.0.push(var.clone());
        }
        Ok(())
    }

    /// `true` when no var is declared.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The vars in declaration order.
    pub fn vars(&self) -> &[Var] {
        &self.0
    }
}

/// Declares a level's own vars: each is bound to the resource its objref
/// names (by any of the resource's names so far), then added to `set`.
pub fn declare(resources: &mut ResMap, set: &mut VarSet, incoming: &[Var]) -> OpResult<()> {
    let listed = || {
        let parts: Vec<String> = incoming
            .iter()
            .map(|v| format!("{{{} {} {{{}}}}}", v.name, v.gvk, v.field_path))
            .collect();
        format!("merging vars [{}]", parts.join(" "))
    };
    for var in incoming {
        let target = ResId {
            gvk: var.target_gvk(),
            name: var.object_name.as_str().into(),
            namespace: var.namespace.as_str().into(),
        };
        let exact = !target.namespace.is_empty() || target.gvk.is_cluster_scoped();
        let matches = |id: &ResId| {
            if exact {
                id.equals(&target)
            } else {
                id.gvk == target.gvk && id.name == target.name
            }
        };
        let matched: Vec<usize> = resources
            .iter()
            .enumerate()
            .filter(|(_, r)| r.has_had_name(&target.name) && r.any_id(matches))
            .map(|(i, _)| i)
            .collect();
        if matched.len() > 1 {
            return Err(var
                .locate(OpError::new(format!(
                    "found {} resId matches for var {} (unable to disambiguate)",
                    matched.len(),
                    var.describe(&var.field_path)
                )))
                .context(listed()));
        }
        if let [one] = matched[..] {
            resources.resources_mut()[one]
                .meta
                .ref_vars
                .push(var.name.clone());
        }
    }
    set.merge(incoming).map_err(|e| e.context(listed()))
}

/// A var's value, typed as its field is.
#[derive(Debug, Clone, PartialEq)]
enum VarValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A map or list: such vars are left unreplaced.
    Other,
}

impl VarValue {
    fn text(&self) -> String {
        match self {
            VarValue::Str(s) => s.clone(),
            VarValue::Int(i) => i.to_string(),
            VarValue::Float(f) => krusty_yaml::go_json_float(*f),
            VarValue::Bool(b) => b.to_string(),
            VarValue::Other => String::new(),
        }
    }
}

fn value_of(node: &Node) -> VarValue {
    match &node.value {
        Value::Scalar(_) => match resolve_input(node) {
            Resolved::Int(i) => i64::try_from(i).map_or(VarValue::Other, VarValue::Int),
            Resolved::Float(f) => VarValue::Float(f),
            Resolved::Bool(b) => VarValue::Bool(b),
            Resolved::Null => VarValue::Other,
            Resolved::Str(t) => VarValue::Str(t.to_string()),
            Resolved::Owned(t) => VarValue::Str(t),
        },
        _ => VarValue::Other,
    }
}

/// The value of every var, read from the resource bound to it.
fn values(resources: &ResMap, set: &VarSet) -> OpResult<Vec<(String, VarValue)>> {
    let mut out = Vec::new();
    for var in set.vars() {
        let bound = resources
            .iter()
            .find(|r: &&Resource| r.meta.ref_vars.iter().any(|n| n == &var.name));
        let Some(r) = bound else {
            return Err(var.locate(OpError::new(format!(
                "var '{}' cannot be mapped to a field in the set of known resources",
                var.describe(var.field_path())
            ))));
        };
        let node = path::lookup(&r.node, &path::split_with_indices(var.field_path()))
            .ok()
            .flatten()
            .ok_or_else(|| {
                var.locate(OpError::new(format!(
                    "field specified in var '{}' not found in corresponding resource",
                    var.describe(var.field_path())
                )))
            })?;
        out.push((var.name.clone(), value_of(node)));
    }
    Ok(out)
}

/// The result of expanding a string.
enum Expanded {
    /// The whole string was one var: its value, typed.
    Whole(VarValue),
    /// Text.
    Text(String),
}

/// Expands `$(NAME)` references (`$$` escapes a `$`); unknown names and
/// map or list values stay as written.
fn expand(input: &str, values: &[(String, VarValue)]) -> Expanded {
    let lookup = |name: &str| -> Option<&VarValue> {
        values
            .iter()
            .find(|(n, v)| n == name && *v != VarValue::Other)
            .map(|(_, v)| v)
    };
    let bytes = input.as_bytes();
    let mut out = String::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < bytes.len() {
        if bytes[cursor] == b'$' && cursor + 1 < bytes.len() {
            out.push_str(&input[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    out.push('$');
                    1
                }
                b'(' => match rest.find(')') {
                    Some(close) => {
                        let name = &rest[1..close];
                        match lookup(name) {
                            Some(v) if input.len() == name.len() + 3 => {
                                return Expanded::Whole(v.clone());
                            }
                            Some(v) => out.push_str(&v.text()),
                            None => {
                                out.push_str("$(");
                                out.push_str(name);
                                out.push(')');
                            }
                        }
                        close + 1
                    }
                    None => {
                        out.push_str("$(");
                        1
                    }
                },
                _ => {
                    let c = rest.chars().next().unwrap_or_default();
                    out.push('$');
                    out.push(c);
                    c.len_utf8()
                }
            };
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    out.push_str(&input[checkpoint.min(input.len())..]);
    Expanded::Text(out)
}

/// Whether Kustomize's var filter takes `node` for a string: one read as
/// a string, or a scalar made during the build without a type of its own
/// (a field a replacement created), whose empty tag counts as a string
/// there; written back, it becomes one (`3` prints as `"3"`).
fn is_string(node: &Node) -> bool {
    node.as_scalar().is_some()
        && (crate::replacement::is_untyped(node)
            || matches!(resolve_input(node), Resolved::Str(_) | Resolved::Owned(_)))
}

/// Replaces a string scalar's references, retyping it when the whole
/// string was one number or boolean var.
fn substitute(node: &mut Node, values: &[(String, VarValue)]) {
    let Value::Scalar(s) = &mut node.value else {
        return;
    };
    let (text, tag) = match expand(&s.text, values) {
        Expanded::Whole(VarValue::Int(i)) => (i.to_string(), Tag::Int),
        Expanded::Whole(VarValue::Float(f)) => (format_float(f), Tag::Float),
        Expanded::Whole(VarValue::Bool(b)) => (b.to_string(), Tag::Bool),
        Expanded::Whole(v) => (v.text(), Tag::Str),
        Expanded::Text(t) => (t, Tag::Str),
    };
    s.text = text.into();
    node.set_tag(tag);
    // Kustomize writes every string at a var reference field back, with
    // or without a `$(VAR)` in it; the new node is no longer folded, so the
    // folded round trip (its extra blank lines) does not apply to it.
    if node.style() == ScalarStyle::Folded {
        node.set_style(ScalarStyle::Literal);
    }
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 64)` (never an exponent).
fn format_float(f: f64) -> String {
    format!("{f}")
}

fn set_node(node: &mut Node, values: &[(String, VarValue)]) -> OpResult<()> {
    if node.is_null() {
        return Ok(());
    }
    match &mut node.value {
        Value::Scalar(_) => {
            if is_string(node) {
                substitute(node, values);
            }
        }
        Value::Map(entries) => {
            for (key, value) in entries.iter_mut() {
                if !is_string(key) {
                    return Err(OpError::new(format!(
                        "invalid map key: value='{}', tag='{}'",
                        path::raw(key),
                        "!!int"
                    )));
                }
                if is_string(value) {
                    substitute(value, values);
                }
            }
        }
        Value::Seq(items) => {
            for item in items.iter_mut() {
                if !is_string(item) {
                    return Err(OpError::new("invalid value type expect a string"));
                }
                substitute(item, values);
            }
        }
    }
    Ok(())
}

/// Replaces var references in every field `specs` name, in every resource.
pub fn resolve(resources: &mut ResMap, set: &VarSet, specs: &[FieldSpec]) -> OpResult<()> {
    if set.is_empty() {
        return Ok(());
    }
    let values = values(resources, set)?;
    for r in resources.resources_mut() {
        let gvk = r.gvk();
        for spec in specs {
            fieldspec::apply(
                &mut r.node,
                &gvk,
                spec,
                CreateKind::None,
                &mut |n: &mut Node| set_node(n, &values),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(e: Expanded) -> String {
        match e {
            Expanded::Text(t) => t,
            Expanded::Whole(v) => format!("whole:{}", v.text()),
        }
    }

    #[test]
    fn expansion_follows_kubernetes_rules() {
        let values = vec![
            ("X".to_string(), VarValue::Str("v".into())),
            ("N".to_string(), VarValue::Int(5)),
        ];
        let e = |s: &str| text(expand(s, &values));
        assert_eq!(e("$(X)"), "whole:v");
        assert_eq!(e("$(N)"), "whole:5");
        assert_eq!(e("--port=$(N)"), "--port=5");
        assert_eq!(e("$$(X)"), "$(X)");
        assert_eq!(e("$$$(X)"), "$v");
        assert_eq!(e("$(X"), "$(X");
        assert_eq!(e("$X ${X} $()"), "$X ${X} $()");
        assert_eq!(e("($(X))$(X)"), "(v)v");
        assert_eq!(e("$(NOPE)"), "$(NOPE)");
        assert_eq!(e("a$"), "a$");
    }
}
