//! `edit set replicas`: replica counts by resource name.

use std::collections::BTreeMap;

use krusty_yaml::Node;

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::node::{items, text};

/// Reads `NAME=COUNT` arguments (a later one for the same name wins).
pub fn parse_args(args: &[String]) -> EditResult<BTreeMap<String, i64>> {
    if args.is_empty() {
        return Err(EditError::new("no replicas specified"));
    }
    args.iter().map(|arg| parse(arg)).collect()
}

fn parse(arg: &str) -> EditResult<(String, i64)> {
    let invalid =
        || EditError::new("invalid format of replica, use the following format: <name>=<count>");
    let mut parts = arg.split('=');
    let (Some(name), Some(count), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid());
    };
    // Go's strconv.ParseInt: an optional sign, decimal digits.
    let digits = count.strip_prefix(['+', '-']).unwrap_or(count);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let count = count.strip_prefix('+').unwrap_or(count);
    let count = count.parse::<i64>().map_err(|_| invalid())?;
    Ok((name.to_string(), count))
}

/// Sets the counts: entries of the file with a name given are replaced,
/// the others stay; the list is sorted by name, as Kustomize writes it.
pub fn set(k: &mut KustomizationFile, counts: &BTreeMap<String, i64>) {
    let mut entries: BTreeMap<String, Node> = counts
        .iter()
        .map(|(name, count)| {
            let node = Node::map_of([
                (Node::plain("count"), Node::plain(count.to_string())),
                (Node::plain("name"), Node::string(name.as_str())),
            ]);
            (name.clone(), node)
        })
        .collect();
    for node in items(k.get("replicas")) {
        let name = text(&node, "name").to_string();
        if !counts.contains_key(&name) {
            entries.insert(name, node);
        }
    }
    k.set_or_remove("replicas", Node::seq_of(entries.into_values()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_name_and_count() {
        assert_eq!(parse("web=3").expect("valid"), ("web".to_string(), 3));
        assert_eq!(parse("web=+3").expect("valid"), ("web".to_string(), 3));
        for bad in [
            "web",
            "web=",
            "web=x",
            "a=b=3",
            "web=3.0",
            "web=99999999999999999999",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
