//! Field specs as written: which field of which kinds an operation reads
//! or writes (`configurations:` files, builtin configs' `fieldSpecs`).
//! Walking resources to those fields is the operations' job.

use krusty_yaml::Node;

use crate::error::{SchemaError, SchemaResult};
use crate::id::Gvk;
use crate::typed::{self, At, Strictness};

/// One field of one class of resources, e.g. `spec/selector` of `v1 Service`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSpec {
    /// Which resources: empty parts match anything.
    pub gvk: Gvk,
    /// The path as written, `/`-separated (`\/` escapes a slash).
    pub path: String,
    /// Create the field (and the maps above it) when it is missing.
    pub create: bool,
}

impl FieldSpec {
    /// A spec for any kind.
    pub fn any(path: &str, create: bool) -> FieldSpec {
        FieldSpec {
            gvk: Gvk::default(),
            path: path.to_string(),
            create,
        }
    }

    /// The path's segments, with escaped slashes restored.
    pub fn segments(&self) -> Vec<String> {
        split_path(&self.path)
    }

    /// `true` if this spec applies to resources of `gvk`.
    pub fn selects(&self, gvk: &Gvk) -> bool {
        gvk.is_selected_by(&self.gvk)
    }

    /// Reads a spec from a mapping with `group`, `version`, `kind`, `path`
    /// and `create` (names matched without regard to case, values typed,
    /// as Go's JSON decoding does). `list` is the JSON path of the list it
    /// is in, for errors. Unknown fields are errors under
    /// [`Strictness::Strict`] (`configurations:` files, kustomizations)
    /// and ignored under [`Strictness::Lenient`] (builtin plugin configs).
    pub fn from_node(node: &Node, list: &str, strictness: Strictness) -> SchemaResult<FieldSpec> {
        if node.as_map().is_none() {
            return Err(SchemaError::new(format!(
                "a field spec must be a mapping (line {})",
                node.pos().line
            )));
        }
        let mut spec = FieldSpec::any("", false);
        let known = ["group", "version", "kind", "path", "create"];
        for (name, value) in typed::fields(node, &known, "FieldSpec", strictness)? {
            let path = format!("{list}.{name}");
            let at = At {
                owner: "FieldSpec",
                path: &path,
            };
            match name {
                "group" => spec.gvk.group = typed::string(value, at)?.into(),
                "version" => spec.gvk.version = typed::string(value, at)?.into(),
                "kind" => spec.gvk.kind = typed::string(value, at)?.into(),
                "path" => spec.path = typed::string(value, at)?,
                _ => spec.create = typed::boolean(value, at)?,
            }
        }
        Ok(spec)
    }

    /// Parses one line of krusty's field-spec tables:
    /// `KIND GROUP VERSION PATH [create]`, `*` for "any".
    pub fn from_table_line(line: &str) -> Option<FieldSpec> {
        let mut parts = line.split_whitespace();
        let any = |s: &str| {
            if s == "*" {
                String::new()
            } else {
                s.to_string()
            }
        };
        let kind = any(parts.next()?);
        let group = any(parts.next()?);
        let version = any(parts.next()?);
        let path = parts.next()?.to_string();
        let create = parts.next() == Some("create");
        Some(FieldSpec {
            gvk: Gvk {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
            },
            path,
            create,
        })
    }
}

/// Splits a field path on `/`, keeping `\/` as a literal slash.
pub fn split_path(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, part) in path.split('/').enumerate() {
        match out.last_mut() {
            Some(last) if i > 0 && last.ends_with('\\') => {
                last.pop();
                last.push('/');
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

/// Reads a list of field specs (see [`FieldSpec::from_node`]); `list` is
/// its JSON path, for errors.
pub fn specs_from_node(
    node: &Node,
    list: &str,
    strictness: Strictness,
) -> SchemaResult<Vec<FieldSpec>> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    let items = node.as_seq().ok_or_else(|| {
        SchemaError::new(format!(
            "field specs must be a list (line {})",
            node.pos().line
        ))
    })?;
    items
        .iter()
        .map(|item| FieldSpec::from_node(item, list, strictness))
        .collect()
}
