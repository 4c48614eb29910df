//! Consolidation: a composition and everything it imports become one
//! ordered list of transformer configs, before anything runs.
//!
//! For one file: each import is consolidated first (its own imports,
//! overrides and order applied); prepend imports go before the local
//! transformers and append imports after them, each group in listed order;
//! the overrides are merged into the imported transformers they name (never
//! the local ones); names must be unique; `transformerOrder`, when given,
//! reorders the whole list.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use krusty_yaml::{Node, Pos, Value};

use krusty_schema::composition::{
    self as schema, child_field, CompositionFile, Directive, ImportMode, Listed, OrderEntry,
    Override, DIRECTIVE_KEY,
};

use super::error_at;
use crate::catalog::CatalogRef;
use crate::error::{BuildError, BuildResult};
use crate::loader::{canonical, LoadRestrictor, Loader};

/// One transformer of a consolidated list.
#[derive(Debug, Clone)]
pub struct Transformer {
    /// Its config (name defaulted, overrides merged).
    pub config: Node,
    /// The file it is written in (a composition file or a file of configs).
    pub file: PathBuf,
    /// That file's text, where an inline Kustomization's patches are
    /// found for messages.
    pub source: Arc<str>,
    /// The folder its paths are relative to: that of the composition file
    /// that lists it.
    pub dir: PathBuf,
    /// The catalogs of the whole composition (its own, then those of its
    /// imports, in order), which a function config with no runtime is
    /// looked up in.
    pub catalogs: Arc<[CatalogRef]>,
}

impl Transformer {
    /// `apiVersion`.
    pub fn api_version(&self) -> &str {
        self.config
            .get("apiVersion")
            .and_then(Node::as_str)
            .unwrap_or("")
    }

    /// `kind`.
    pub fn kind(&self) -> &str {
        self.config.get("kind").and_then(Node::as_str).unwrap_or("")
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.config
            .get_path(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or("")
    }

    /// `apiVersion kind 'name'`, for messages.
    pub fn describe(&self) -> String {
        format!("{} {} '{}'", self.api_version(), self.kind(), self.name())
    }

    fn same_id(&self, config: &Node) -> bool {
        let get = |k: &[&str]| config.get_path(k).and_then(Node::as_str).unwrap_or("");
        self.api_version() == get(&["apiVersion"])
            && self.kind() == get(&["kind"])
            && self.name() == get(&["metadata", "name"])
    }
}

/// The composition file in `dir`: `composition.yaml` or `composition.yml`;
/// `None` when there is neither. Both, or one beside a kustomization file,
/// is an error.
pub fn find(dir: &Path) -> BuildResult<Option<PathBuf>> {
    let found: Vec<PathBuf> = super::FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => {
            let beside = crate::kustomization::FILE_NAMES
                .iter()
                .find(|n| dir.join(n).is_file());
            match beside {
                Some(k) => Err(BuildError::new(format!(
                    "'{}' holds both a composition file ({}) and a kustomization file ({k}); a folder holds one or the other",
                    dir.display(),
                    one.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                ))),
                None => Ok(Some(one.clone())),
            }
        }
        _ => Err(BuildError::new(format!(
            "Found multiple composition files under: {}",
            dir.display()
        ))),
    }
}

/// The consolidated transformer list of the composition `file`.
pub fn consolidate(file: &Path, restrictor: LoadRestrictor) -> BuildResult<Vec<Transformer>> {
    let mut catalogs = Vec::new();
    let mut list = consolidate_in(file, restrictor, &mut Vec::new(), &mut catalogs)?;
    let catalogs: Arc<[CatalogRef]> = Arc::from(catalogs);
    for t in &mut list {
        t.catalogs = Arc::clone(&catalogs);
    }
    Ok(list)
}

fn consolidate_in(
    file: &Path,
    restrictor: LoadRestrictor,
    chain: &mut Vec<PathBuf>,
    catalogs: &mut Vec<CatalogRef>,
) -> BuildResult<Vec<Transformer>> {
    let file = canonical(file)?;
    let text: Arc<str> = crate::loader::read_text(&file, None)?.into();
    let parsed = schema::parse(&file, &text).map_err(super::unreadable)?;
    chain.push(file.clone());
    let result = consolidate_file(&parsed, &text, restrictor, chain, catalogs);
    chain.pop();
    result
}

fn consolidate_file(
    parsed: &CompositionFile,
    source: &Arc<str>,
    restrictor: LoadRestrictor,
    chain: &mut Vec<PathBuf>,
    catalogs: &mut Vec<CatalogRef>,
) -> BuildResult<Vec<Transformer>> {
    let file = &parsed.path;
    let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    let loader = Loader::new(&dir, restrictor)?;
    // The file's own catalogs come before those of its imports.
    catalogs.extend(parsed.catalogs.iter().map(|(written, pos)| CatalogRef {
        written: written.clone(),
        loader: loader.clone(),
        file: file.clone(),
        pos: *pos,
    }));
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for import in &parsed.imports {
        let target = imported_file(&loader, &import.path)
            .and_then(|target| canonical(&target))
            .map_err(|e| {
                error_at(
                    file,
                    import.pos,
                    format!("transformersFrom '{}': {e}", import.path),
                )
            })?;
        if let Some(at) = chain.iter().position(|p| *p == target) {
            let names: Vec<String> = chain[at..]
                .iter()
                .chain(std::iter::once(&target))
                .map(|p| p.display().to_string())
                .collect();
            return Err(error_at(
                file,
                import.pos,
                format!(
                    "transformersFrom '{}': import cycle: {}",
                    import.path,
                    names.join(" -> ")
                ),
            ));
        }
        let list = consolidate_in(&target, restrictor, chain, catalogs)
            .map_err(|e| e.context(format!("transformersFrom '{}'", import.path)))?;
        match import.mode {
            ImportMode::Prepend => before.extend(list),
            ImportMode::Append => after.extend(list),
        }
    }
    for entry in &parsed.overrides {
        apply_override(file, entry, &mut before, &mut after)?;
    }
    let mut list = before;
    for listed in &parsed.transformers {
        match listed {
            Listed::Inline(config) => list.push(Transformer {
                config: config.clone(),
                file: file.clone(),
                source: Arc::clone(source),
                dir: dir.clone(),
                catalogs: Arc::from([]),
            }),
            Listed::File { path, pos } => {
                let (configs_file, configs_text, configs) = loader
                    .yaml_documents(path)
                    .map_err(|e| error_at(file, *pos, format!("transformers '{path}': {e}")))?;
                let configs_text: Arc<str> = configs_text.into();
                for mut config in configs {
                    schema::check_transformer(&configs_file, &mut config, "transformers")?;
                    list.push(Transformer {
                        config,
                        file: configs_file.clone(),
                        source: Arc::clone(&configs_text),
                        dir: dir.clone(),
                        catalogs: Arc::from([]),
                    });
                }
            }
        }
    }
    list.extend(after);
    check_unique(&list)?;
    match &parsed.order {
        Some((order, at)) => reorder(file, list, order, *at),
        None => Ok(list),
    }
}

/// The composition file an import names: the file, or the composition in
/// the folder. A folder may be anywhere (as a base may); a file is read
/// under the load restrictor.
fn imported_file(loader: &Loader, path: &str) -> BuildResult<PathBuf> {
    let resolved = canonical(&loader.root.join(path))?;
    if resolved.is_dir() {
        return find(&resolved)?.ok_or_else(|| {
            BuildError::new(format!(
                "no composition.yaml or composition.yml in '{}'",
                resolved.display()
            ))
        });
    }
    loader.file(path)
}

/// Fails on two transformers with one apiVersion, kind and name.
fn check_unique(list: &[Transformer]) -> BuildResult<()> {
    let mut seen: std::collections::HashMap<(&str, &str, &str), &Transformer> =
        std::collections::HashMap::new();
    for t in list {
        if let Some(first) = seen.insert((t.api_version(), t.kind(), t.name()), t) {
            return Err(BuildError::new(format!(
                "two transformers are {} (in {} line {} and {} line {}); give one another metadata.name",
                t.describe(),
                first.file.display(),
                first.config.pos().line,
                t.file.display(),
                t.config.pos().line
            )));
        }
    }
    Ok(())
}

/// The list in the order `transformerOrder` gives, which must name every
/// transformer exactly once.
fn reorder(
    file: &Path,
    list: Vec<Transformer>,
    order: &[OrderEntry],
    order_at: Pos,
) -> BuildResult<Vec<Transformer>> {
    let mut slots: Vec<Option<Transformer>> = list.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    for entry in order {
        let matches: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, t)| t.as_ref().is_some_and(|t| names(entry, t)))
            .map(|(i, _)| i)
            .collect();
        let already = out.iter().any(|t| names(entry, t));
        match matches.as_slice() {
            [i] => out.extend(slots[*i].take()),
            [] if already => {
                return Err(error_at(
                    file,
                    entry.pos,
                    format!("transformerOrder: {} is listed twice", entry.describe()),
                ))
            }
            [] => {
                return Err(error_at(
                    file,
                    entry.pos,
                    format!(
                        "transformerOrder: {} names no transformer",
                        entry.describe()
                    ),
                ))
            }
            many => {
                let which: Vec<String> = many
                    .iter()
                    .filter_map(|i| slots[*i].as_ref().map(Transformer::describe))
                    .collect();
                return Err(error_at(
                    file,
                    entry.pos,
                    format!(
                        "transformerOrder: {} is ambiguous ({}); give apiVersion and kind",
                        entry.describe(),
                        which.join(", ")
                    ),
                ));
            }
        }
    }
    let missing: Vec<String> = slots.iter().flatten().map(Transformer::describe).collect();
    if !missing.is_empty() {
        return Err(error_at(
            file,
            order_at,
            format!(
                "transformerOrder must name every transformer; missing: {}",
                missing.join(", ")
            ),
        ));
    }
    Ok(out)
}

/// Whether the `transformerOrder` entry names `t`.
fn names(entry: &OrderEntry, t: &Transformer) -> bool {
    entry.names(t.api_version(), t.kind(), t.name())
}

/// Applies the override `entry` of `file` to the imported transformers it
/// matches (by apiVersion, kind and name): its top-level `$patch: delete`
/// removes them from the list, `$patch: replace` puts the override in
/// their place, and otherwise it is merged into them. An override that
/// matches nothing is an error.
fn apply_override(
    file: &Path,
    entry: &Override,
    before: &mut Vec<Transformer>,
    after: &mut Vec<Transformer>,
) -> BuildResult<()> {
    let patch = &entry.patch;
    let mut matched = false;
    for list in [&mut *before, &mut *after] {
        let mut kept = Vec::with_capacity(list.len());
        for mut t in list.drain(..) {
            if !t.same_id(patch) {
                kept.push(t);
                continue;
            }
            matched = true;
            match entry.directive {
                Directive::Delete => {}
                Directive::Replace => {
                    // The whole config now comes from the override's file.
                    t.config = added(file, patch, "")?;
                    t.file = file.to_path_buf();
                    kept.push(t);
                }
                Directive::Merge => {
                    let described = t.describe();
                    merge(
                        &mut t.config,
                        patch,
                        &OverrideSite {
                            file,
                            target: &described,
                        },
                        "",
                    )?;
                    kept.push(t);
                }
            }
        }
        *list = kept;
    }
    if matched {
        return Ok(());
    }
    let id = Transformer {
        config: patch.clone(),
        file: file.to_path_buf(),
        source: Arc::from(""),
        dir: PathBuf::new(),
        catalogs: Arc::from([]),
    };
    Err(error_at(
        file,
        patch.pos(),
        format!(
            "transformerOverrides: no imported transformer is {}",
            id.describe()
        ),
    ))
}

/// The override being merged, for its errors: its file, and the imported
/// transformer it is merged into.
struct OverrideSite<'a> {
    file: &'a Path,
    target: &'a str,
}

/// Merges the mapping `patch` into the mapping `target` as Kustomize's
/// strategic merge does on untyped data: mappings merge, a null removes
/// the field, lists and scalars replace; a nested mapping's `$patch:
/// delete` removes the field and `$patch: replace` puts the mapping in
/// place of the one it patches. Every other key (`$retainKeys`,
/// `$setElementOrder/...`) is ordinary data, as there. A field whose kind
/// (mapping, list, scalar) the patch changes is an error; `field` is the
/// dotted path of `target`, for messages.
fn merge(target: &mut Node, patch: &Node, site: &OverrideSite, field: &str) -> BuildResult<()> {
    let Some(entries) = patch.as_map() else {
        return Ok(());
    };
    for (key, value) in entries {
        let Some(name) = key.key_str() else { continue };
        if name == DIRECTIVE_KEY {
            continue;
        }
        let inner = child_field(field, name);
        if value.is_null() {
            target.remove(name);
            continue;
        }
        let present = target.get(name).filter(|v| !v.is_null());
        let wanted = match value.as_map() {
            Some(_) => schema::directive(site.file, value, &inner)?,
            None => Directive::Replace,
        };
        match present {
            None if wanted == Directive::Delete => {
                target.remove(name);
            }
            None => target.set(name, added(site.file, value, &inner)?),
            Some(existing) => {
                if kind_of(existing) != kind_of(value) {
                    return Err(error_at(
                        site.file,
                        value.pos(),
                        format!(
                            "transformerOverrides: {}: field '{inner}' is {} here and {} in the imported transformer",
                            site.target,
                            kind_of(value),
                            kind_of(existing)
                        ),
                    ));
                }
                match wanted {
                    Directive::Delete => {
                        target.remove(name);
                    }
                    Directive::Replace if value.as_map().is_some() => {
                        target.set(name, added(site.file, value, &inner)?)
                    }
                    Directive::Replace => target.set(name, value.clone()),
                    Directive::Merge => {
                        if let Some(existing) = target.get_mut(name) {
                            merge(existing, value, site, &inner)?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// A patch value for a field the target does not have (or replaces): a
/// mapping is merged into an empty one (its nulls dropped, its nested
/// directives applied, its `$patch` taken out), anything else is as
/// written.
fn added(file: &Path, value: &Node, field: &str) -> BuildResult<Node> {
    let mut out = value.clone();
    match out.as_map_mut() {
        Some(entries) => entries.clear(),
        None => return Ok(out),
    }
    // Nothing is there for the patch's fields to disagree with.
    merge(&mut out, value, &OverrideSite { file, target: "" }, field)?;
    Ok(out)
}

/// A node's kind, for messages.
fn kind_of(node: &Node) -> &'static str {
    match node.value {
        Value::Map(_) => "a mapping",
        Value::Seq(_) => "a list",
        Value::Scalar(_) => "a scalar",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        krusty_yaml::first_root(text).unwrap().unwrap()
    }

    /// `patch` merged into `config`, as Go's JSON encoding prints it.
    fn merged(config: &str, patch: &str) -> BuildResult<String> {
        let mut config = node(config);
        let site = OverrideSite {
            file: Path::new("override.yaml"),
            target: "t",
        };
        merge(&mut config, &node(patch), &site, "")?;
        Ok(krusty_yaml::to_go_json(&config))
    }

    #[test]
    fn overrides_merge_maps_and_replace_the_rest() {
        assert_eq!(
            merged(
                "spec:\n  a: 1\n  list: [x, y]\n  keep: k\n  drop: d\n",
                "spec:\n  a: 2\n  list: [z]\n  drop: null\n  new: n\n"
            )
            .unwrap(),
            r#"{"spec":{"a":2,"keep":"k","list":["z"],"new":"n"}}"#
        );
    }

    #[test]
    fn directives_replace_and_delete_mappings() {
        let config = "spec:\n  a: {x: 1, y: 2}\n  b: {keep: k}\n  c: {deep: {z: 1}}\n  n: null\n";
        let patch = "spec:\n  a: {$patch: replace, x: 9, gone: null}\n  b: {$patch: delete}\n  c: {deep: {$patch: delete}}\n  n: {$patch: delete}\n  new: {$patch: merge, k: v, sub: {$patch: delete}}\n  missing: {$patch: delete}\n";
        assert_eq!(
            merged(config, patch).unwrap(),
            r#"{"spec":{"a":{"x":9},"c":{},"new":{"k":"v"}}}"#
        );
    }

    #[test]
    fn other_directives_and_lists_are_data() {
        assert_eq!(
            merged(
                "spec:\n  l: [1]\n  m: {x: 1}\n",
                "spec:\n  l: [{$patch: delete, k: null}]\n  m: {$retainKeys: [y], y: 2}\n"
            )
            .unwrap(),
            r#"{"spec":{"l":[{"$patch":"delete","k":null}],"m":{"$retainKeys":["y"],"x":1,"y":2}}}"#
        );
    }

    #[test]
    fn a_field_keeps_its_kind() {
        for (config, patch, what) in [
            (
                "s: str\n",
                "s: {k: 1}\n",
                "field 's' is a mapping here and a scalar",
            ),
            (
                "m: {k: 1}\n",
                "m: str\n",
                "field 'm' is a scalar here and a mapping",
            ),
            (
                "l: [1]\n",
                "l: {$patch: replace}\n",
                "field 'l' is a mapping here and a list",
            ),
            (
                "s: str\n",
                "s: [1]\n",
                "field 's' is a list here and a scalar",
            ),
        ] {
            let err = merged(config, patch).unwrap_err().to_string();
            assert!(err.contains("override.yaml") && err.contains(what), "{err}");
        }
        // Where the target has nothing (or null), any kind is added.
        assert_eq!(
            merged("n: null\n", "n: {k: 1}\nnew: [1]\n").unwrap(),
            r#"{"n":{"k":1},"new":[1]}"#
        );
    }

    #[test]
    fn unknown_directives_are_errors() {
        let err = merged("m: {k: 1}\n", "m: {$patch: Replace}\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("field 'm.$patch': 'Replace' is not one of merge, replace, delete"),
            "{err}"
        );
    }
}
