//! ImageTagTransformer: changes container image names, tags and digests.

use krusty_resource::ResMap;
use krusty_yaml::{Node, Value};
use regex::{Regex, RegexSet};

use crate::error::{OpError, OpResult};
use crate::fieldspec::{apply, CreateKind, FieldSpec};

/// One `images:` entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImageChange {
    /// The image name to match (without tag or digest).
    pub name: String,
    /// Replacement name.
    pub new_name: String,
    /// Replacement tag.
    pub new_tag: String,
    /// Replacement digest.
    pub digest: String,
}

/// Applies one image change to containers everywhere and to `specs`.
#[derive(Debug, Clone)]
pub struct SetImage {
    /// The change.
    pub image: ImageChange,
    /// Extra fields holding images.
    pub specs: Vec<FieldSpec>,
    matcher: Regex,
}

impl SetImage {
    /// Prepares the change; the name is a regular expression, as in Kustomize.
    pub fn new(image: ImageChange, specs: Vec<FieldSpec>) -> OpResult<SetImage> {
        let pattern = format!(
            "^{}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$",
            image.name
        );
        let matcher = Regex::new(&pattern)
            .map_err(|e| OpError::new(format!("invalid image name {:?}: {e}", image.name)))?;
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
            return Err(OpError::new("an image field must be a scalar"));
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
            (true, true) => {}
        }
        if !tag.is_empty() {
            name = format!("{name}:{tag}");
        }
        if !digest.is_empty() {
            name = format!("{name}@{digest}");
        }
        n.replace_keeping_pos(Node::string(name));
        Ok(())
    }
}

/// Several image changes sharing field specs (a kustomization's `images:`),
/// applied in one pass: every image field gets the changes in order, which
/// is what applying them one after another over all resources gives.
#[derive(Debug, Clone)]
pub struct SetImages {
    /// The changes, in order.
    pub changes: Vec<SetImage>,
    /// Extra fields holding images.
    pub specs: Vec<FieldSpec>,
    /// All the changes' patterns, to find the ones an image matches at once.
    patterns: RegexSet,
}

impl SetImages {
    /// Prepares the changes.
    pub fn new(changes: Vec<ImageChange>, specs: Vec<FieldSpec>) -> OpResult<SetImages> {
        let changes = changes
            .into_iter()
            .map(|c| SetImage::new(c, Vec::new()))
            .collect::<OpResult<Vec<_>>>()?;
        let patterns = RegexSet::new(changes.iter().map(|c| c.matcher.as_str()))
            .map_err(|e| OpError::new(format!("invalid image name: {e}")))?;
        Ok(SetImages {
            changes,
            specs,
            patterns,
        })
    }

    /// Updates every matching image.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        update_images(resources, &self.specs, &|n| self.update_value(n))
    }

    /// Applies, in order, each change whose pattern matches the image as
    /// the earlier changes left it.
    fn update_value(&self, n: &mut Node) -> OpResult<()> {
        let mut next = 0;
        loop {
            let Some(s) = n.as_scalar() else {
                return Err(OpError::new("an image field must be a scalar"));
            };
            let Some(i) = self.patterns.matches(&s.text).iter().find(|&i| i >= next) else {
                return Ok(());
            };
            self.changes[i].update_value(n)?;
            next = i + 1;
        }
    }
}

/// Calls `update` on every image of every resource but CRDs: the `image` of
/// each container and init container, and the fields `specs` name.
fn update_images(
    resources: &mut ResMap,
    specs: &[FieldSpec],
    update: &dyn Fn(&mut Node) -> OpResult<()>,
) -> OpResult<()> {
    for r in resources.resources_mut() {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        visit_containers(&mut r.node, &mut |n| update(n))?;
        let gvk = r.gvk();
        for spec in specs {
            apply(
                &mut r.node,
                &gvk,
                spec,
                CreateKind::None,
                &mut |n: &mut Node| update(n),
            )?;
        }
    }
    Ok(())
}

/// Calls `update` on the `image` of every `containers` and
/// `initContainers` item at any depth.
fn visit_containers(
    node: &mut Node,
    update: &mut dyn FnMut(&mut Node) -> OpResult<()>,
) -> OpResult<()> {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                visit_containers(v, update)?;
                if matches!(k.key_str(), Some("containers" | "initContainers")) {
                    if let Some(items) = v.as_seq_mut() {
                        for c in items {
                            if let Some(image) = c.get_mut("image") {
                                update(image)?;
                            }
                        }
                    }
                }
            }
        }
        Value::Seq(items) => {
            for i in items {
                visit_containers(i, update)?;
            }
        }
        Value::Scalar(_) => {}
    }
    Ok(())
}

/// Splits `registry/name:tag@digest` into name, tag and digest.
pub fn split_image(image: &str) -> (String, String, String) {
    let slash = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &image[slash..];
    let at = search.find('@').map(|i| i + slash);
    let colon = search.find(':').map(|i| i + slash);
    match (colon, at) {
        (None, None) => (image.to_string(), String::new(), String::new()),
        (c, Some(a)) if c.is_none_or(|c| a < c) => (
            image[..a].to_string(),
            String::new(),
            image[a + 1..].to_string(),
        ),
        (Some(c), Some(a)) => (
            image[..c].to_string(),
            image[c + 1..a].to_string(),
            image[a + 1..].to_string(),
        ),
        (Some(c), None) => (
            image[..c].to_string(),
            image[c + 1..].to_string(),
            String::new(),
        ),
        (None, Some(_)) => unreachable!("handled by the digest-only arm"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_names_tags_and_digests() {
        assert_eq!(split_image("nginx"), ("nginx".into(), "".into(), "".into()));
        assert_eq!(
            split_image("localhost:5000/app:1.0"),
            ("localhost:5000/app".into(), "1.0".into(), "".into())
        );
        assert_eq!(
            split_image("app@sha256:abc"),
            ("app".into(), "".into(), "sha256:abc".into())
        );
        assert_eq!(
            split_image("r.io/app:1@sha256:abc"),
            ("r.io/app".into(), "1".into(), "sha256:abc".into())
        );
    }

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
