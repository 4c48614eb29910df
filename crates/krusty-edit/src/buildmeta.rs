//! `edit add|set|remove buildmetadata`: the `buildMetadata` options.

use krusty_yaml::Node;

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::node::strings;

/// The options Kustomize knows.
const OPTIONS: [&str; 3] = [
    "originAnnotations",
    "transformerAnnotations",
    "managedByLabel",
];

/// Reads the one comma-separated argument.
pub fn parse_args(args: &[String]) -> EditResult<Vec<String>> {
    let arg = match args {
        [] => return Err(EditError::new("must specify a buildMetadata option")),
        [one] => one,
        many => {
            return Err(EditError::new(format!(
                "too many arguments: [{}]; to provide multiple buildMetadata options, please separate options by comma",
                many.join(" ")
            )))
        }
    };
    arg.split(',')
        .map(|opt| {
            if OPTIONS.contains(&opt) {
                Ok(opt.to_string())
            } else {
                Err(EditError::new(format!(
                    "invalid buildMetadata option: {opt}"
                )))
            }
        })
        .collect()
}

/// `edit add buildmetadata`: appends the options; one already there fails.
pub fn add(k: &mut KustomizationFile, options: &[String]) -> EditResult<()> {
    let mut list = strings(k.get("buildMetadata"));
    for opt in options {
        if list.contains(opt) {
            return Err(EditError::new(format!(
                "buildMetadata option {opt} already in kustomization file"
            )));
        }
        list.push(opt.clone());
    }
    write(k, &list);
    Ok(())
}

/// `edit set buildmetadata`: the options replace those there.
pub fn set(k: &mut KustomizationFile, options: &[String]) {
    write(k, options);
}

/// `edit remove buildmetadata`: removes the options named.
pub fn remove(k: &mut KustomizationFile, options: &[String]) {
    let list: Vec<String> = strings(k.get("buildMetadata"))
        .into_iter()
        .filter(|o| !options.contains(o))
        .collect();
    write(k, &list);
}

fn write(k: &mut KustomizationFile, list: &[String]) {
    k.set_or_remove(
        "buildMetadata",
        Node::seq_of(list.iter().map(|o| Node::string(o.as_str()))),
    );
}
