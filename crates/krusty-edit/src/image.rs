//! `edit set image`: new names, tags and digests for images.

use std::collections::BTreeMap;

use krusty_yaml::Node;

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::node::{items, map_of_texts, text};

/// What an argument asks for: `*` keeps the value the file has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageArg {
    /// The image name to match.
    pub name: String,
    /// Its new name ("" for none).
    pub new_name: String,
    /// Its new tag ("" for none).
    pub new_tag: String,
    /// Its new digest ("" for none).
    pub digest: String,
}

/// Kustomize's message for an argument it cannot read.
const INVALID: &str = "invalid format of image, use one of the following options:
- <image>=<newimage>:<newtag>
- <image>=<newimage>@<digest>
- <image>=<newimage>:<newtag>@<digest>
- <image>=<newimage>
- <image>:<newtag>
- <image>:<newtag>@<digest>
- <image>@<digest>";

/// `*`: keep what the file has.
const KEEP: &str = "*";

/// Reads the arguments (`name=newname:tag@digest`, `name:tag`,
/// `name@digest`, `name=newname`); a later argument for the same name wins.
pub fn parse_args(args: &[String]) -> EditResult<BTreeMap<String, ImageArg>> {
    if args.is_empty() {
        return Err(EditError::new("no image specified"));
    }
    let mut out = BTreeMap::new();
    for arg in args {
        let image = parse(arg)?;
        out.insert(image.name.clone(), image);
    }
    Ok(out)
}

fn parse(arg: &str) -> EditResult<ImageArg> {
    let (key, value) = match arg.split_once('=') {
        Some((k, v)) => (Some(k), v),
        None => (None, arg),
    };
    let (name, tag, digest) = krusty_schema::image::split_image(value);
    if name == arg {
        return Err(EditError::new(INVALID));
    }
    let mut image = ImageArg {
        new_tag: tag,
        digest,
        ..ImageArg::default()
    };
    match key {
        None => image.name = name,
        Some(key) => {
            image.name = key.to_string();
            image.new_name = name;
        }
    }
    Ok(image)
}

/// Sets the images: an entry of the file with a name given is replaced (a
/// `*` keeping the file's value), the others stay; the list is sorted by
/// name, as Kustomize writes it.
pub fn set(k: &mut KustomizationFile, args: &BTreeMap<String, ImageArg>) {
    enum Entry {
        Kept(Node),
        New(ImageArg),
    }
    let mut entries: BTreeMap<String, Entry> = args
        .iter()
        .map(|(name, arg)| (name.clone(), Entry::New(arg.clone())))
        .collect();
    for node in items(k.get("images")) {
        let name = text(&node, "name").to_string();
        let entry = match args.get(&name) {
            Some(arg) => Entry::New(ImageArg {
                name: name.clone(),
                new_name: keep(&arg.new_name, text(&node, "newName")),
                new_tag: keep(&arg.new_tag, text(&node, "newTag")),
                digest: keep(&arg.digest, text(&node, "digest")),
            }),
            None => Entry::Kept(node),
        };
        entries.insert(name, entry);
    }
    let list = entries.into_values().map(|e| match e {
        Entry::Kept(node) => node,
        Entry::New(image) => map_of_texts([
            ("digest", dropped(&image.digest)),
            ("name", image.name.as_str()),
            ("newName", dropped(&image.new_name)),
            ("newTag", dropped(&image.new_tag)),
        ]),
    });
    k.set_or_remove("images", Node::seq_of(list));
}

/// The argument's value, or the file's for `*`.
fn keep(arg: &str, file: &str) -> String {
    if arg == KEEP { file } else { arg }.to_string()
}

/// A `*` with nothing to keep writes nothing.
fn dropped(value: &str) -> &str {
    if value == KEEP {
        ""
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(arg: &str) -> EditResult<ImageArg> {
        parse(arg)
    }

    #[test]
    fn reads_every_form() {
        let i = one("nginx=reg/nginx:1.2@sha256:ab").expect("valid");
        assert_eq!(
            (
                i.name.as_str(),
                i.new_name.as_str(),
                i.new_tag.as_str(),
                i.digest.as_str()
            ),
            ("nginx", "reg/nginx", "1.2", "sha256:ab")
        );
        let i = one("nginx:1.2").expect("valid");
        assert_eq!((i.name.as_str(), i.new_tag.as_str()), ("nginx", "1.2"));
        let i = one("nginx=other").expect("valid");
        assert_eq!((i.name.as_str(), i.new_name.as_str()), ("nginx", "other"));
        let i = one("alpine@sha256:24a0").expect("valid");
        assert_eq!(
            (i.name.as_str(), i.digest.as_str()),
            ("alpine", "sha256:24a0")
        );
        assert_eq!(one("nginx").unwrap_err().0, INVALID);
        assert!(one("reg:5000/nginx").is_err());
    }
}
