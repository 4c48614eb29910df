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
//! The file is written as one document, as Kustomize's `edit` writes it:
//! the kustomization a build reads. Document markers after its first
//! `---`, and whatever follows the document (a closing `---` or `...`,
//! empty documents, documents no build reads), are left out. Lines the
//! writer makes end as the file's first line ends (`\r\n` or `\n`).
//!
//! A file opened with [`KustomizationFile::find`] is read as Kustomize's
//! `edit` reads it, its deprecated fields folded into their successors
//! ([`crate::fix::fold_deprecated`]); it stays locked until the model is
//! dropped, and is written back whole or not at all ([`crate::open`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use krusty_schema::{Kustomization, KustomizeVersion, FILE_NAMES};
use krusty_yaml::{DuplicateKeys, Limits, Node, Value};

use crate::error::{EditError, EditResult};
use crate::lines;
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
    /// The line break of the lines the writer makes.
    ending: &'static str,
    /// The file it was read from, locked; `None` for a new file.
    opened: Option<Arc<Opened>>,
}

impl KustomizationFile {
    /// Opens the kustomization file of `dir`, failing as Kustomize's `edit`
    /// fails when there is none, or more than one, and when it is not a
    /// regular file or is a link leading out of `dir`, and folds its
    /// deprecated fields as Kustomize's `edit` does on every read. The file
    /// is locked until the returned model is dropped: another edit of it
    /// waits.
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
        crate::fix::fold_deprecated(&mut file);
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
            ending: "\n",
            opened: None,
        }
    }

    /// Reads `text` as the kustomization file at `path`, checking it as a
    /// build would (unknown fields, field types; the newest Kustomize
    /// release's fields are known). The model is of a new file:
    /// [`save`](KustomizationFile::save) creates it.
    pub fn parse(path: PathBuf, text: &str) -> EditResult<KustomizationFile> {
        if let Err(e) = Kustomization::parse(text, KustomizeVersion::default()) {
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
        file.ending = lines::ending(text);
        file.whole = !in_block_layout(&entries, lines::split(text).len());
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

    /// Cuts `text` into the prefix and each field's head and lines; the
    /// lines after the document (from the first marker after its last
    /// key) are left out.
    fn split_lines(&mut self, text: &str, entries: Vec<(Node, Node)>) {
        let lines = lines::split(text);
        let key_lines: Vec<usize> = entries
            .iter()
            .map(|(k, _)| k.pos().line as usize - 1)
            .collect();
        let doc_end = key_lines.last().map_or(lines.len(), |&last| {
            (last + 1..lines.len())
                .find(|&i| lines::is_marker(lines[i]))
                .unwrap_or(lines.len())
        });
        let mut starts = Vec::with_capacity(key_lines.len());
        let mut floor = 0;
        for &line in &key_lines {
            let mut start = line;
            while start > floor && lines::is_comment_or_blank(lines[start - 1]) {
                start -= 1;
            }
            starts.push(start);
            floor = line + 1;
        }
        self.prefix = prefix(
            &lines[..starts.first().copied().unwrap_or(lines.len())],
            !entries.is_empty(),
        );
        for (i, (key, value)) in entries.into_iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(doc_end);
            let mut body = lines[key_lines[i]..end].concat();
            if !body.ends_with(['\n', '\r']) {
                body.push_str(self.ending);
            }
            let mut content_end = end;
            while content_end > key_lines[i] + 1
                && lines::is_comment_or_blank(lines[content_end - 1])
            {
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

    /// Which file it was read from (`None` for a new file).
    pub(crate) fn file_id(&self) -> Option<open::FileId> {
        self.opened.as_ref().and_then(|o| o.id().ok())
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
        let write = |node: &Node| -> EditResult<String> {
            krusty_yaml::to_yaml_preserving(node)
                .map(|text| lines::with_ending(text, self.ending))
                .map_err(|e| EditError::new(e.to_string()))
        };
        let emit = |field: &Field| -> EditResult<String> {
            let mut key = field.key.clone();
            if let Some(extras) = key.extras.as_mut() {
                extras.head.clear();
            }
            write(&Node::map_of([(key, field.value.clone())]))
        };
        let live = self.fields.iter().filter(|f| !f.removed);
        if self.whole {
            let entries = live.map(|f| (f.key.clone(), f.value.clone()));
            return write(&Node::map_of(entries));
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
                    if !out.ends_with(['\n', '\r']) && !field.tail.is_empty() {
                        out.push_str(self.ending);
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

/// Every key starts a line at column 1, on its own line, in order, among
/// the `line_count` lines of the file: the file's lines can be cut into
/// fields.
fn in_block_layout(entries: &[(Node, Node)], line_count: usize) -> bool {
    let mut last = 0;
    entries.iter().all(|(k, _)| {
        let pos = k.pos();
        let ok = pos.col == 1 && pos.line > last && pos.line as usize <= line_count;
        last = pos.line;
        ok
    })
}

/// What is kept of the lines before the first field: one document, so
/// no marker after the first `---`. A file without fields keeps only
/// its comments, blank lines, directives and a first `---` that holds
/// no value (an empty or null document's value would stand before the
/// fields an edit adds).
fn prefix(lines: &[&str], has_fields: bool) -> String {
    let mut started = false;
    let mut out = String::new();
    for line in lines {
        let keep = if lines::is_marker(line) {
            let bare = lines::content(line)[3..].trim_start();
            let keep = !started
                && lines::is_start_marker(line)
                && (has_fields || bare.is_empty() || bare.starts_with('#'));
            started |= lines::is_start_marker(line);
            keep
        } else {
            has_fields || lines::is_comment_or_blank(line) || (!started && line.starts_with('%'))
        };
        if keep {
            out.push_str(line);
        }
    }
    out
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
    fn one_document_is_written() {
        let mut k = file("---\n# lead\n---\nnamespace: a\n...\n---\nnamePrefix: b-\n");
        k.set("nameSuffix", Node::string("-s"));
        assert_eq!(
            k.render().expect("renders"),
            "---\n# lead\nnamespace: a\nnameSuffix: -s\n"
        );
        for empty in ["{}\n", "--- {}\n", "# only\n---\n"] {
            let mut k = file(empty);
            k.set("namespace", Node::string("a"));
            let text = k.render().expect("renders");
            assert!(text.ends_with("namespace: a\n"), "{empty:?}: {text:?}");
            assert!(!text.contains("{}"), "{empty:?}: {text:?}");
            assert!(
                Kustomization::parse(&text, KustomizeVersion::default()).is_ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn lines_broken_by_a_lone_cr_are_cut_as_yaml_reads_them() {
        let mut k = file("resources:\r- a.yaml\rnamePrefix: x-\r");
        k.set("namePrefix", Node::string("y-"));
        assert_eq!(
            k.render().expect("renders"),
            "resources:\r- a.yaml\rnamePrefix: y-\n"
        );
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
