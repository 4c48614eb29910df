//! The kustomization file as an editable model that writes back what a
//! person wrote.
//!
//! The file is held as its top-level fields, each with the text it had in
//! the source: the comment and blank lines above its key (its head) and its
//! own lines. A field an edit does not touch is written back byte for byte;
//! a field it changes is written from its nodes by the source-preserving
//! writer (comments, key order and scalar styles inside it kept); a new field
//! goes after the fields already there, new fields in the order Kustomize's
//! writer gives them. A removed field leaves its head comment behind, as in
//! Kustomize. A file whose top-level mapping is not a block at column 1
//! (a JSON kustomization, say) is written whole by the preserving writer.
//!
//! A file opened with [`KustomizationFile::find`] stays locked until the
//! model is dropped, and is written back whole or not at all
//! ([`crate::open`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use krusty_build::kustomization::FILE_NAMES;
use krusty_yaml::{DuplicateKeys, Limits, Node, Value};

use crate::error::{EditError, EditResult};
use crate::open::{self, Opened};

/// The order in which Kustomize's writer puts the fields it adds to a
/// kustomization file (after the fields already there).
pub const FIELD_ORDER: [&str; 33] = [
    "apiVersion",
    "kind",
    "metadata",
    "sortOptions",
    "resources",
    "bases",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "crds",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "configMapGenerator",
    "secretGenerator",
    "helmCharts",
    "helmChartInflationGenerator",
    "helmGlobals",
    "generatorOptions",
    "vars",
    "images",
    "replacements",
    "replicas",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "components",
    "openapi",
    "buildMetadata",
];

/// What the build's reader says about a file with no fields; an edit
/// accepts such a file, as Kustomize's does.
const EMPTY: &str = "kustomization.yaml is empty";

/// One top-level field.
#[derive(Debug, Clone)]
struct Field {
    /// The key as written.
    key: Node,
    /// The value (null for a removed field).
    value: Node,
    /// The comment and blank lines above the key, as written.
    head: String,
    /// The field's own lines as written; `None` once changed (or new).
    body: Option<String>,
    /// Comment and blank lines at column 1 after the field's content at
    /// the end of the file, kept when the field changes.
    tail: String,
    /// Read from the file (new fields go after these).
    original: bool,
    /// Removed: only its head is written.
    removed: bool,
}

/// A kustomization file open for editing.
#[derive(Debug, Clone)]
pub struct KustomizationFile {
    path: PathBuf,
    /// What stands before the first field (`---`, comments).
    prefix: String,
    fields: Vec<Field>,
    /// Written whole by the preserving writer (no line layout to keep).
    whole: bool,
    /// The file it was read from, locked; `None` for a new file.
    opened: Option<Arc<Opened>>,
}

impl KustomizationFile {
    /// Opens the kustomization file of `dir`, failing as Kustomize's `edit`
    /// fails when there is none, or more than one, and when it is not a
    /// regular file or is a link leading out of `dir`. The file is locked
    /// until the returned model is dropped: another edit of it waits.
    pub fn find(dir: &Path) -> EditResult<KustomizationFile> {
        let found: Vec<&str> = FILE_NAMES
            .iter()
            .copied()
            .filter(|name| dir.join(name).exists())
            .collect();
        let name = match found.as_slice() {
            [] => {
                return Err(EditError::new(format!(
                    "Missing kustomization file '{}'.",
                    FILE_NAMES[0]
                )))
            }
            [one] => *one,
            many => {
                return Err(EditError::new(format!(
                    "Found multiple kustomization file: [{}]",
                    many.join(" ")
                )))
            }
        };
        let path = dir.join(name);
        if path.is_dir() {
            return Err(EditError::new(format!("{name} should be a file")));
        }
        let (opened, text) = open::open(&path, dir)?;
        let mut file = KustomizationFile::parse(path, &text)?;
        file.opened = Some(Arc::new(opened));
        Ok(file)
    }

    /// A new, empty kustomization file at `path` (written by [`save`]).
    ///
    /// [`save`]: KustomizationFile::save
    pub fn new_at(path: PathBuf) -> KustomizationFile {
        KustomizationFile {
            path,
            prefix: String::new(),
            fields: Vec::new(),
            whole: false,
            opened: None,
        }
    }

    /// Reads `text` as the kustomization file at `path`, checking it as a
    /// build would (unknown fields, field types). The model is of a new
    /// file: [`save`](KustomizationFile::save) creates it.
    pub fn parse(path: PathBuf, text: &str) -> EditResult<KustomizationFile> {
        if let Err(e) = krusty_build::Kustomization::parse(text) {
            let message = e.to_string();
            if message != EMPTY {
                return Err(EditError::new(format!("invalid Kustomization: {message}")));
            }
        }
        let limits = Limits::with_duplicate_keys(DuplicateKeys::LastWins);
        let docs = krusty_yaml::parse_stream_with(text, limits)
            .map_err(|e| EditError::new(e.to_string()))?;
        let root = docs.into_iter().find_map(|d| d.root);
        let entries: Vec<(Node, Node)> = match root.map(|r| r.value) {
            None => Vec::new(),
            Some(Value::Map(entries)) => entries.into_iter().collect(),
            Some(Value::Scalar(s)) if s.text.is_empty() || s.text == "null" => Vec::new(),
            Some(_) => return Err(EditError::new("a kustomization must be a YAML mapping")),
        };
        let mut file = KustomizationFile::new_at(path);
        file.whole = !in_block_layout(&entries);
        if file.whole {
            file.fields = entries
                .into_iter()
                .map(|(key, value)| Field::changed(key, value, true))
                .collect();
        } else {
            file.split_lines(text, entries);
        }
        Ok(file)
    }

    /// Cuts `text` into the prefix and each field's head and lines.
    fn split_lines(&mut self, text: &str, entries: Vec<(Node, Node)>) {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let key_lines: Vec<usize> = entries
            .iter()
            .map(|(k, _)| k.pos().line as usize - 1)
            .collect();
        let mut starts = Vec::with_capacity(key_lines.len());
        let mut floor = 0;
        for &line in &key_lines {
            let mut start = line;
            while start > floor && is_head_line(lines[start - 1]) {
                start -= 1;
            }
            starts.push(start);
            floor = line + 1;
        }
        self.prefix = lines[..starts.first().copied().unwrap_or(lines.len())].concat();
        for (i, (key, value)) in entries.into_iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(lines.len());
            let mut body = lines[key_lines[i]..end].concat();
            if !body.ends_with('\n') {
                body.push('\n');
            }
            let mut content_end = end;
            while content_end > key_lines[i] + 1 && is_head_line(lines[content_end - 1]) {
                content_end -= 1;
            }
            self.fields.push(Field {
                key,
                value,
                head: lines[starts[i]..key_lines[i]].concat(),
                body: Some(body),
                tail: lines[content_end..end].concat(),
                original: true,
                removed: false,
            });
        }
    }

    /// Where the file is (or will be) written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The value of field `name` (matched without regard to case, as
    /// Kustomize matches field names), unless absent or removed.
    pub fn get(&self, name: &str) -> Option<&Node> {
        self.position(name)
            .map(|i| &self.fields[i].value)
            .filter(|v| !v.is_null())
    }

    /// Sets field `name` to `value`: in its place if the file has it, else
    /// as a new field where Kustomize's writer puts it.
    pub fn set(&mut self, name: &str, value: Node) {
        match self.position(name) {
            Some(i) => {
                let field = &mut self.fields[i];
                field.value = value;
                field.body = None;
                field.removed = false;
            }
            None => {
                let at = self.new_field_position(name);
                self.fields
                    .insert(at, Field::changed(Node::plain(name), value, false));
            }
        }
    }

    /// Sets field `name` to `value`, or removes it when `value` is an empty
    /// list or map (Kustomize's writer leaves empty fields out).
    pub fn set_or_remove(&mut self, name: &str, value: Node) {
        let empty = match &value.value {
            Value::Seq(items) => items.is_empty(),
            Value::Map(entries) => entries.is_empty(),
            Value::Scalar(s) => s.text.is_empty(),
        };
        if empty {
            self.remove(name);
        } else {
            self.set(name, value);
        }
    }

    /// Removes field `name`; the comment lines above it stay.
    pub fn remove(&mut self, name: &str) {
        if let Some(i) = self.position(name) {
            let field = &mut self.fields[i];
            field.removed = true;
            field.value = Node::null();
            field.body = None;
        }
    }

    /// Adds `apiVersion` and `kind` where missing, as Kustomize's `edit`
    /// does on every file it writes.
    pub fn complete_type_meta(&mut self) {
        let kind = match self.get("kind").and_then(Node::as_str) {
            Some(kind) if !kind.is_empty() => kind.to_string(),
            _ => {
                self.set("kind", Node::plain("Kustomization"));
                "Kustomization".to_string()
            }
        };
        if self
            .get("apiVersion")
            .and_then(Node::as_str)
            .is_none_or(str::is_empty)
        {
            let version = if kind == "Component" {
                "kustomize.config.k8s.io/v1alpha1"
            } else {
                "kustomize.config.k8s.io/v1beta1"
            };
            self.set("apiVersion", Node::plain(version));
        }
    }

    /// The file's new text.
    pub fn render(&self) -> EditResult<String> {
        let emit = |field: &Field| -> EditResult<String> {
            let mut key = field.key.clone();
            if let Some(extras) = key.extras.as_mut() {
                extras.head.clear();
            }
            krusty_yaml::to_yaml_preserving(&Node::map_of([(key, field.value.clone())]))
                .map_err(|e| EditError::new(e.to_string()))
        };
        let live = self.fields.iter().filter(|f| !f.removed);
        if self.whole {
            let entries = live.map(|f| (f.key.clone(), f.value.clone()));
            return krusty_yaml::to_yaml_preserving(&Node::map_of(entries))
                .map_err(|e| EditError::new(e.to_string()));
        }
        let mut out = self.prefix.clone();
        for field in &self.fields {
            out.push_str(&field.head);
            match &field.body {
                Some(body) => out.push_str(body),
                None => {
                    if !field.removed {
                        out.push_str(&emit(field)?);
                    }
                    if !out.ends_with('\n') && !field.tail.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&field.tail);
                }
            }
        }
        Ok(out)
    }

    /// Writes the file whole (or not at all): over the file it was read
    /// from, keeping its mode and owner, or, for a new file, at its path,
    /// failing if anything is there.
    pub fn save(&self) -> EditResult<()> {
        let text = self.render()?;
        match &self.opened {
            Some(opened) => opened.write(&self.path, &text),
            None => open::create(&self.path, &text),
        }
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.fields
            .iter()
            .position(|f| {
                !f.removed && f.key.as_str().is_some_and(|k| k.eq_ignore_ascii_case(name))
            })
            .or_else(|| {
                self.fields
                    .iter()
                    .position(|f| f.key.as_str().is_some_and(|k| k.eq_ignore_ascii_case(name)))
            })
    }

    /// After the fields read from the file, among the new ones by
    /// [`FIELD_ORDER`].
    fn new_field_position(&self, name: &str) -> usize {
        let rank = field_rank(name);
        let first_new = self
            .fields
            .iter()
            .rposition(|f| f.original)
            .map_or(0, |i| i + 1);
        first_new
            + self.fields[first_new..]
                .iter()
                .take_while(|f| f.key.as_str().map_or(0, field_rank) <= rank)
                .count()
    }
}

impl Field {
    fn changed(key: Node, value: Node, original: bool) -> Field {
        Field {
            key,
            value,
            head: String::new(),
            body: None,
            tail: String::new(),
            original,
            removed: false,
        }
    }
}

/// A field's place in [`FIELD_ORDER`] (unknown names last).
fn field_rank(name: &str) -> usize {
    FIELD_ORDER
        .iter()
        .position(|f| f.eq_ignore_ascii_case(name))
        .unwrap_or(FIELD_ORDER.len())
}

/// Every key starts a line at column 1, on its own line, in order: the
/// file's lines can be cut into fields.
fn in_block_layout(entries: &[(Node, Node)]) -> bool {
    let mut last = 0;
    entries.iter().all(|(k, _)| {
        let pos = k.pos();
        let ok = pos.col == 1 && pos.line > last;
        last = pos.line;
        ok
    })
}

/// A blank line, or a comment starting at column 1: it belongs to the
/// field below it.
fn is_head_line(line: &str) -> bool {
    let text = line.trim_end_matches(['\n', '\r']);
    text.trim().is_empty() || text.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> KustomizationFile {
        KustomizationFile::parse(PathBuf::from("kustomization.yaml"), text).expect("valid")
    }

    #[test]
    fn untouched_file_comes_back_byte_for_byte() {
        let text =
            "---\n# top\nresources: [a.yaml,   'b.yaml'] # flow\n\n# prefix\nnamePrefix: \"p-\"\n";
        assert_eq!(file(text).render().expect("renders"), text);
    }

    #[test]
    fn a_changed_field_keeps_its_head_and_the_others_their_text() {
        let text = "# top\nresources:\n  - a.yaml # first\n\n# the prefix\nnamePrefix: 'p-'\nimages: [{name: x}]\n";
        let mut k = file(text);
        k.set("namePrefix", Node::string("q-"));
        assert_eq!(
            k.render().expect("renders"),
            "# top\nresources:\n  - a.yaml # first\n\n# the prefix\nnamePrefix: q-\nimages: [{name: x}]\n"
        );
    }

    #[test]
    fn new_fields_go_last_in_kustomize_order() {
        let mut k = file("namespace: x\n");
        k.set("nameSuffix", Node::string("-s"));
        k.set("namePrefix", Node::string("p-"));
        k.complete_type_meta();
        assert_eq!(
            k.render().expect("renders"),
            "namespace: x\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamePrefix: p-\nnameSuffix: -s\n"
        );
    }

    #[test]
    fn a_removed_field_leaves_its_comment() {
        let mut k = file("# res\nresources:\n- a.yaml\nnamespace: x\n");
        k.remove("resources");
        assert_eq!(k.render().expect("renders"), "# res\nnamespace: x\n");
    }

    #[test]
    fn comments_closing_the_file_stay_when_the_last_field_changes() {
        let mut k = file("namespace: a\nresources:\n- a.yaml\n\n# the end\n");
        k.set("resources", Node::seq_of([Node::string("b.yaml")]));
        assert_eq!(
            k.render().expect("renders"),
            "namespace: a\nresources:\n- b.yaml\n\n# the end\n"
        );
        k.remove("resources");
        assert_eq!(k.render().expect("renders"), "namespace: a\n\n# the end\n");
    }

    #[test]
    fn field_names_match_without_regard_to_case() {
        let mut k = file("NamePrefix: a-\n");
        k.set("namePrefix", Node::string("b-"));
        assert_eq!(k.render().expect("renders"), "NamePrefix: b-\n");
    }

    #[test]
    fn a_json_kustomization_is_written_whole() {
        let mut k = file("{\"namePrefix\": \"a-\", \"resources\": [\"x.yaml\"]}\n");
        k.set("namePrefix", Node::string("b-"));
        assert_eq!(
            k.render().expect("renders"),
            "namePrefix: b-\nresources:\n- \"x.yaml\"\n"
        );
    }
}
