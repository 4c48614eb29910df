//! Replacements as written (`replacements:` entries and replacement
//! files): a source field, or a value, and the target fields it is
//! copied to. Copying is the operations' job.

use krusty_yaml::{Node, Pos, Value};

use crate::error::{SchemaError, SchemaResult};
use crate::selector::Selector;
use crate::typed::{self, At, Strictness};
use crate::version::KustomizeVersion;

/// `options:` of a source or target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldOptions {
    /// Split the value at this delimiter...
    pub delimiter: String,
    /// ...and use (or replace) this part.
    pub index: i64,
    /// Create missing target fields.
    pub create: bool,
}

/// Where a replacement's value comes from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Source {
    /// The resource (group, version, kind, name, namespace).
    pub id: Selector,
    /// The field (default `metadata.name`).
    pub field_path: String,
    /// Delimiter and index.
    pub options: FieldOptions,
}

/// Where a replacement's value goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Target {
    /// Resources to write to.
    pub select: Option<Selector>,
    /// Resources to leave alone.
    pub reject: Vec<Selector>,
    /// Fields to write (default `metadata.name`).
    pub field_paths: Vec<String>,
    /// Delimiter, index and create.
    pub options: FieldOptions,
}

/// One replacement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replacement {
    /// Where it is written: its file, when not the kustomization or
    /// config that lists it, and position (for messages).
    pub written_at: (Option<String>, Pos),
    /// The value's origin.
    pub source: Option<Source>,
    /// A value written as it is (`sourceValue:`, Kustomize v5.8.1).
    pub source_value: Option<String>,
    /// Where it is written.
    pub targets: Option<Vec<Target>>,
}

/// An entry of a replacements list: inline, or a file of replacements.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplacementEntry {
    /// A replacement written inline.
    Inline(Box<Replacement>),
    /// `path:` a file holding one replacement or a list of them.
    Path(String),
}

fn string(value: &Node, owner: &'static str, path: &'static str) -> SchemaResult<String> {
    typed::string(value, At { owner, path })
}

fn read_options(node: &Node, strictness: Strictness) -> SchemaResult<FieldOptions> {
    let mut o = FieldOptions::default();
    for (name, value) in typed::fields(
        node,
        &["delimiter", "index", "create"],
        "FieldOptions",
        strictness,
    )? {
        let at = At {
            owner: "FieldOptions",
            path: name,
        };
        match name {
            "delimiter" => o.delimiter = typed::string(value, at)?,
            "index" => o.index = typed::integer(value, at)?,
            _ => o.create = typed::boolean(value, at)?,
        }
    }
    Ok(o)
}

fn read_source(node: &Node, strictness: Strictness) -> SchemaResult<Source> {
    let known = [
        "group",
        "version",
        "kind",
        "name",
        "namespace",
        "fieldPath",
        "options",
    ];
    let mut s = Source::default();
    for (name, value) in typed::fields(node, &known, "SourceSelector", strictness)? {
        match name {
            "options" => s.options = read_options(value, strictness)?,
            "fieldPath" => s.field_path = string(value, "SourceSelector", name)?,
            _ => {
                s.id.set_field(name, string(value, "SourceSelector", name)?);
            }
        }
    }
    Ok(s)
}

fn read_target(node: &Node, strictness: Strictness) -> SchemaResult<Target> {
    let known = ["select", "reject", "fieldPaths", "options"];
    let mut t = Target::default();
    for (name, value) in typed::fields(node, &known, "TargetSelector", strictness)? {
        match name {
            "select" if !value.is_null() => {
                t.select = Some(Selector::from_node(value, "Selector", strictness)?)
            }
            "select" => {}
            "reject" => {
                for r in typed::array(
                    value,
                    At {
                        owner: "TargetSelector",
                        path: name,
                    },
                    "[]*types.Selector",
                )? {
                    t.reject
                        .push(Selector::from_node(r, "Selector", strictness)?);
                }
            }
            "fieldPaths" => {
                t.field_paths = typed::string_list(
                    value,
                    At {
                        owner: "TargetSelector",
                        path: name,
                    },
                )?
            }
            _ => t.options = read_options(value, strictness)?,
        }
    }
    Ok(t)
}

/// Reads one replacement mapping (`source` and `targets`, and from
/// Kustomize v5.8.1 on `sourceValue`).
pub fn read_replacement(
    node: &Node,
    strictness: Strictness,
    version: KustomizeVersion,
) -> SchemaResult<Replacement> {
    let mut r = Replacement {
        written_at: (None, node.pos()),
        ..Replacement::default()
    };
    let known: &[&str] = if version >= KustomizeVersion::V5_8_1 {
        &["source", "sourceValue", "targets"]
    } else {
        &["source", "targets"]
    };
    for (name, value) in typed::fields(node, known, "Replacement", strictness)? {
        match name {
            "source" if !value.is_null() => r.source = Some(read_source(value, strictness)?),
            "sourceValue" if !value.is_null() => {
                r.source_value = Some(string(
                    value,
                    "ReplacementField",
                    "replacements.Replacement.sourceValue",
                )?)
            }
            "targets" if !value.is_null() => {
                let items = typed::array(
                    value,
                    At {
                        owner: "Replacement",
                        path: name,
                    },
                    "[]*types.TargetSelector",
                )?;
                r.targets = Some(
                    items
                        .iter()
                        .map(|t| read_target(t, strictness))
                        .collect::<SchemaResult<_>>()?,
                );
            }
            _ => {}
        }
    }
    Ok(r)
}

/// Reads an entry of a replacements list: `{path: FILE}` or an inline
/// replacement (not both).
pub fn read_entry(
    node: &Node,
    strictness: Strictness,
    version: KustomizeVersion,
) -> SchemaResult<ReplacementEntry> {
    let path = node
        .as_map()
        .and_then(|m| {
            m.iter()
                .find(|(k, _)| k.key_str().is_some_and(|k| k.eq_ignore_ascii_case("path")))
        })
        .map(|(_, v)| v);
    match path {
        Some(p) => {
            if node.as_map().is_some_and(|m| m.len() > 1) {
                return Err(
                    SchemaError::new("cannot specify both path and inline replacement")
                        .located(None, node.pos()),
                );
            }
            Ok(ReplacementEntry::Path(typed::string(
                p,
                At {
                    owner: "ReplacementField",
                    path: "path",
                },
            )?))
        }
        None => Ok(ReplacementEntry::Inline(Box::new(read_replacement(
            node, strictness, version,
        )?))),
    }
}

/// Reads a replacements file: one replacement or a list of them (unknown
/// fields ignored).
pub fn read_file(
    text: &str,
    path: &str,
    version: KustomizeVersion,
) -> SchemaResult<Vec<Replacement>> {
    // Kustomize decodes them with go-yaml v2: a repeated key replaces the
    // earlier one, and `yes`/`on` are booleans.
    let limits = krusty_yaml::Limits::with_duplicate_keys(krusty_yaml::DuplicateKeys::LastWins);
    let docs = krusty_yaml::parse_stream_with(text, limits)
        .map_err(|e| SchemaError::new(format!("{path}: {e}")))?;
    let mut out = Vec::new();
    for mut root in docs.into_iter().filter_map(|d| d.root) {
        krusty_yaml::retype_as_go_yaml_v2(&mut root);
        let in_file = |e: SchemaError| e.in_file(path);
        match &root.value {
            Value::Seq(items) => {
                for item in items {
                    out.push(
                        read_replacement(item, Strictness::Lenient, version).map_err(in_file)?,
                    );
                }
            }
            _ => out.push(read_replacement(&root, Strictness::Lenient, version).map_err(in_file)?),
        }
    }
    for r in &mut out {
        r.written_at.0 = Some(path.to_string());
    }
    Ok(out)
}
