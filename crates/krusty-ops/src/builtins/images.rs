//! ImageTagTransformer: changes container image names, tags and digests.

use krusty_resource::{ResMap, Resource};
use krusty_yaml::{Node, Value};
use regex::Regex;

use crate::error::{OpError, OpResult};
use crate::fieldspec::{apply, CreateKind, FieldSpec, KindIndex};
use crate::parallel;

pub use krusty_schema::image::{split_image, ImageChange};

/// Applies one image change to containers everywhere and to `specs`.
#[derive(Debug, Clone)]
pub struct SetImage {
    /// The change.
    pub image: ImageChange,
    /// Extra fields holding images.
    pub specs: Vec<FieldSpec>,
    matcher: ImageMatcher,
}

/// Whether an image (`name[:tag][@sha256:digest]`) has the name of an
/// `images:` entry. The name is a regular expression, as in Kustomize;
/// names made only of letters, digits, `_`, `/`, `:`, `-`, `@` and `.` (any
/// character) are matched without compiling one.
#[derive(Debug, Clone)]
enum ImageMatcher {
    Plain(String),
    Regex(Regex),
}

impl ImageMatcher {
    fn new(name: &str) -> OpResult<ImageMatcher> {
        let plain = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | ':' | '-' | '@' | '.'));
        if plain {
            return Ok(ImageMatcher::Plain(name.to_string()));
        }
        let pattern = format!("^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$");
        krusty_match::go_regex::compile(&pattern)
            .map(ImageMatcher::Regex)
            .map_err(|e| OpError::new(format!("invalid image name {name:?}: {e}")))
    }

    fn is_match(&self, image: &str) -> bool {
        match self {
            ImageMatcher::Regex(re) => re.is_match(image),
            // Plain names are ASCII: against an ASCII image, characters are
            // bytes, so the tag/digest suffix is checked first and the name
            // compared from its end (names in one `images:` list usually
            // share a registry prefix and differ at the end).
            ImageMatcher::Plain(name) if image.is_ascii() => {
                let (name, image) = (name.as_bytes(), image.as_bytes());
                // The byte after the name must start a tag or a digest (or
                // end the image): a test that rules out most names at once.
                image.len() >= name.len()
                    && matches!(image.get(name.len()), None | Some(b':' | b'@'))
                    && is_tag_and_digest(&image[name.len()..])
                    && name
                        .iter()
                        .rev()
                        .zip(image[..name.len()].iter().rev())
                        .all(|(&n, &c)| c == n || (n == b'.' && c != b'\n'))
            }
            ImageMatcher::Plain(name) => {
                let mut chars = image.chars();
                for n in name.chars() {
                    match chars.next() {
                        Some(c) if n == '.' && c != '\n' => {}
                        Some(c) if c == n => {}
                        _ => return false,
                    }
                }
                is_tag_and_digest(chars.as_str().as_bytes())
            }
        }
    }
}

/// Whether `rest` is what may follow an image name: an optional `:tag` and
/// an optional `@sha256:digest`, each of tag characters.
fn is_tag_and_digest(rest: &[u8]) -> bool {
    let tag_char =
        |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'{' | b'}' | b'-');
    let skip_run = |s: &[u8]| s.iter().position(|c| !tag_char(c)).unwrap_or(s.len());
    let mut rest = rest;
    if let Some(r) = rest.strip_prefix(b":") {
        rest = &r[skip_run(r)..];
    }
    if let Some(r) = rest.strip_prefix(b"@sha256:") {
        rest = &r[skip_run(r)..];
    }
    rest.is_empty()
}

impl SetImage {
    /// Prepares the change; the name is a regular expression, as in Kustomize.
    pub fn new(image: ImageChange, specs: Vec<FieldSpec>) -> OpResult<SetImage> {
        let matcher = ImageMatcher::new(&image.name)?;
        Ok(SetImage {
            image,
            specs,
            matcher,
        })
    }

    /// Updates every matching image.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        update_images(resources, &self.specs, &|n| self.update_value(n))
    }

    fn update_value(&self, n: &mut Node) -> OpResult<()> {
        let Some(s) = n.as_scalar() else {
            return Err(crate::path::wrong_kind("ScalarNode", n));
        };
        if !self.matcher.is_match(&s.text) {
            return Ok(());
        }
        let (mut name, mut tag, mut digest) = split_image(&s.text);
        if !self.image.new_name.is_empty() {
            name = self.image.new_name.clone();
        }
        match (self.image.new_tag.is_empty(), self.image.digest.is_empty()) {
            (false, false) => {
                tag = self.image.new_tag.clone();
                digest = self.image.digest.clone();
            }
            (false, true) => {
                tag = self.image.new_tag.clone();
                digest.clear();
            }
            (true, false) => {
                tag.clear();
                digest = self.image.digest.clone();
            }
            (true, true) if !self.image.tag_suffix.is_empty() => {
                tag.push_str(&self.image.tag_suffix);
                digest.clear();
            }
            (true, true) => {}
        }
        if !tag.is_empty() {
            name = format!("{name}:{tag}");
        }
        if !digest.is_empty() {
            name = format!("{name}@{digest}");
        }
        // A new scalar in the old one's style, without a type of its own,
        // as Kustomize sets it (a plain `1234` prints as a number).
        *n = Node::scalar(name, n.style());
        Ok(())
    }
}

/// Several image changes sharing field specs (a kustomization's `images:`),
/// applied in one pass. Kustomize runs each change over all resources, and a
/// change visits an image once for the container walk and once more for each
/// field spec that reaches it too (a Deployment's containers: twice). So an
/// image visited `k` times gets each change `k` times in a row, in order
/// (which matters for `tagSuffix`, and for a change whose result a later
/// change matches).
#[derive(Debug, Clone)]
pub struct SetImages {
    /// The changes, in order.
    pub changes: Vec<SetImage>,
    /// Extra fields holding images.
    pub specs: Vec<FieldSpec>,
}

impl SetImages {
    /// Prepares the changes.
    pub fn new(changes: Vec<ImageChange>, specs: Vec<FieldSpec>) -> OpResult<SetImages> {
        let changes = changes
            .into_iter()
            .map(|c| SetImage::new(c, Vec::new()))
            .collect::<OpResult<Vec<_>>>()?;
        Ok(SetImages { changes, specs })
    }

    /// Updates every matching image.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        let index = KindIndex::new(self.specs.iter().map(|s| s.gvk.kind.as_str()));
        parallel::try_each(resources.resources_mut(), |r| {
            // First count the visits of each image field (by address: the
            // counting walk changes nothing), then change each field at its
            // first visit.
            let mut visits: Vec<(usize, usize)> = Vec::new();
            visit_images(r, &self.specs, &index, &mut |n| {
                visits.push((address(n), 1));
                Ok(())
            })?;
            if visits.is_empty() {
                return Ok(());
            }
            let visits = count_visits(visits);
            visit_images(r, &self.specs, &index, &mut |n| {
                let Ok(at) = visits.binary_search_by_key(&address(n), |v| v.0) else {
                    return Ok(());
                };
                let times = visits[at].1.replace(0);
                self.update_value(n, times)
            })
        })
    }

    /// Applies each change `times` times in a row, in order, each time
    /// to the image as the earlier ones left it.
    fn update_value(&self, n: &mut Node, times: usize) -> OpResult<()> {
        for change in &self.changes {
            for _ in 0..times {
                change.update_value(n)?;
            }
        }
        Ok(())
    }
}

/// A node's address, which identifies it while the tree does not change shape.
fn address(n: &Node) -> usize {
    n as *const Node as usize
}

/// Sorted addresses with their number of visits (in a `Cell`, so the
/// changing walk can spend them).
fn count_visits(mut visits: Vec<(usize, usize)>) -> Vec<(usize, std::cell::Cell<usize>)> {
    visits.sort_unstable_by_key(|v| v.0);
    let mut counted: Vec<(usize, std::cell::Cell<usize>)> = Vec::with_capacity(visits.len());
    for (addr, _) in visits {
        match counted.last() {
            Some((last, n)) if *last == addr => n.set(n.get() + 1),
            _ => counted.push((addr, std::cell::Cell::new(1))),
        }
    }
    counted
}

/// Calls `update` on every image of every resource but CRDs: the `image` of
/// each container and init container, and the fields `specs` name.
fn update_images(
    resources: &mut ResMap,
    specs: &[FieldSpec],
    update: &(dyn Fn(&mut Node) -> OpResult<()> + Sync),
) -> OpResult<()> {
    let index = KindIndex::new(specs.iter().map(|s| s.gvk.kind.as_str()));
    parallel::try_each(resources.resources_mut(), |r| {
        visit_images(r, specs, &index, &mut |n| update(n))
    })
}

/// Calls `update` on each visit of an image field of `r` (none for CRDs):
/// the container walk first, then each of `specs` (`index` indexes them).
fn visit_images(
    r: &mut Resource,
    specs: &[FieldSpec],
    index: &KindIndex,
    update: &mut dyn FnMut(&mut Node) -> OpResult<()>,
) -> OpResult<()> {
    if r.kind() == "CustomResourceDefinition" {
        return Ok(());
    }
    // An image set to number-like text has no type: a later strategic
    // merge quotes it (see `patch`).
    let mut number_like = false;
    let mut update = |n: &mut Node| {
        update(n)?;
        number_like |= crate::replacement::is_untyped_number(n);
        Ok(())
    };
    visit_containers(&mut r.node, &mut update)?;
    let gvk = r.gvk();
    for spec in index.positions(&gvk.kind).map(|i| &specs[i]) {
        apply(&mut r.node, &gvk, spec, CreateKind::None, &mut update)
            .map_err(|e| e.context(considering(spec, &r.id())))?;
    }
    r.meta.untyped_numbers |= number_like;
    Ok(())
}

/// Kustomize's context for a failure on field spec `spec` of resource
/// `id`: past a list, the path walked in each item.
fn considering(spec: &FieldSpec, id: &krusty_resource::ResId) -> String {
    let parts: Vec<&str> = spec.path.split('/').collect();
    let at = format!("considering field '{}' of object {id}", spec.path);
    match parts.iter().position(|p| p.ends_with("[]")) {
        Some(i) => format!(
            "{at}: visit traversal on path: [{}]",
            parts[i + 1..].join(" ")
        ),
        None => at,
    }
}

/// Calls `update` on the `image` of every `containers` and
/// `initContainers` item at any depth (deepest first, as found). Scalars,
/// most of any tree, are passed over without a call.
fn visit_containers(
    node: &mut Node,
    update: &mut dyn FnMut(&mut Node) -> OpResult<()>,
) -> OpResult<()> {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                match &mut v.value {
                    Value::Scalar(_) => {}
                    Value::Map(_) => visit_containers(v, update)?,
                    Value::Seq(items) => {
                        visit_items(items, update)?;
                        if matches!(k.key_str(), Some("containers" | "initContainers")) {
                            for c in items.iter_mut() {
                                if let Some(image) = c.get_mut("image") {
                                    update(image)?;
                                }
                            }
                        }
                    }
                }
            }
        }
        Value::Seq(items) => visit_items(items, update)?,
        Value::Scalar(_) => {}
    }
    Ok(())
}

/// [`visit_containers`] over a sequence's collections.
fn visit_items(
    items: &mut [Node],
    update: &mut dyn FnMut(&mut Node) -> OpResult<()>,
) -> OpResult<()> {
    for item in items {
        if !matches!(item.value, Value::Scalar(_)) {
            visit_containers(item, update)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_tag_replaces_tag_and_digest() {
        let op = SetImage::new(
            ImageChange {
                name: "nginx".into(),
                new_tag: "2".into(),
                ..Default::default()
            },
            Vec::new(),
        )
        .unwrap();
        let mut n = Node::plain("nginx:1@sha256:x");
        op.update_value(&mut n).unwrap();
        assert_eq!(n.as_str(), Some("nginx:2"));
        let mut other = Node::plain("nginx-other:1");
        op.update_value(&mut other).unwrap();
        assert_eq!(other.as_str(), Some("nginx-other:1"));
    }
}

#[cfg(test)]
mod matcher_tests {
    use super::*;

    /// Plain names match exactly as the regular expression Kustomize
    /// builds from them.
    #[test]
    fn plain_names_match_like_the_regex() {
        let names = [
            "nginx",
            "my.registry/app",
            "localhost:5000/app",
            "a.b",
            "x",
            "img@sha256",
            "re-g_1/a.b-c",
        ];
        let images = [
            "nginx",
            "nginx:1.27",
            "nginx:1.27@sha256:abc",
            "nginx@sha256:ab_c",
            "nginxx",
            "nginx:1:2",
            "nginx:",
            "nginx@sha256:",
            "nginx@sha:1",
            "my.registry/app:v1",
            "myxregistry/app",
            "my.registry/app/x",
            "localhost:5000/app:{v}",
            "a.b",
            "aXb",
            "a\nb",
            "ab",
            "x:y@sha256:z",
            "x y",
            "img@sha256:1",
            "img@sha256",
            "re-g_1/aXb-c:1",
            "nginx:1.27 ",
            "ñginx",
            "x:ñ",
            "ñ",
            "añb",
            "añb:1",
            "my.registry/app:ñ",
            "my\nregistry/app",
            "localhost:5000/app@sha256:x",
            "re-g_1/a.b-c@sha256:x:y",
        ];
        for name in names {
            let plain = ImageMatcher::new(name).unwrap();
            assert!(matches!(plain, ImageMatcher::Plain(_)), "{name}");
            let re = Regex::new(&format!(
                "^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$"
            ))
            .unwrap();
            for image in images {
                assert_eq!(
                    plain.is_match(image),
                    re.is_match(image),
                    "{name} vs {image:?}"
                );
            }
        }
        assert!(matches!(
            ImageMatcher::new("ngin(x|y)").unwrap(),
            ImageMatcher::Regex(_)
        ));
        assert!(ImageMatcher::new("bad(").is_err());
    }
}
