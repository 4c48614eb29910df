//! Reading a function's answer without parsing again the items it sent
//! back unchanged.
//!
//! An orchestrator writes the list with [`ResourceList::to_yaml_tracked`],
//! which remembers where each item's text is. Most functions change few
//! items, and a function that keeps each item's text (any function written
//! with this crate, or a pass-through) returns the others byte for byte:
//! [`parse_answer`] takes those from the items that were sent and parses
//! only the rest. Whenever the answer is laid out differently, it parses
//! the whole answer, so the result never depends on the shortcut.
//!
//! Between programs that both hold [`Node`]s (krusty and a function
//! server written with this crate) the list can travel instead in
//! krusty-yaml's binary encoding ([`krusty_yaml::binary`]):
//! [`ResourceList::to_binary`] and [`ResourceList::from_binary`], under the
//! media type [`NODE_MEDIA_TYPE`] (gRPC: `FORMAT_KRUSTY_NODE`). Every node
//! comes back exactly as it was written, so nothing is parsed and no
//! shortcut is needed (docs/function-servers.md).

use krusty_yaml::{Node, Value};

use crate::wire::{ResourceList, WireError};

/// A list as written for a function, with each item's span.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The wire text.
    pub text: String,
    /// Where the first item starts (after the `items:` line).
    items_start: usize,
    /// Where each item's text ends.
    item_ends: Vec<usize>,
}

impl Sent {
    fn item(&self, i: usize) -> Option<&str> {
        let start = if i == 0 {
            self.items_start
        } else {
            *self.item_ends.get(i - 1)?
        };
        Some(&self.text[start..*self.item_ends.get(i)?])
    }
}

impl ResourceList {
    /// Writes the list as [`ResourceList::to_yaml`] does, remembering where
    /// each item's text is.
    pub fn to_yaml_tracked(&self) -> Result<Sent, WireError> {
        let mut text = format!(
            "apiVersion: {}\nkind: {}\n",
            crate::wire::API_VERSION,
            crate::wire::KIND
        );
        let mut item_ends = Vec::with_capacity(self.items.len());
        if self.items.is_empty() {
            text.push_str("items: []\n");
        } else {
            text.push_str("items:\n");
        }
        let items_start = text.len();
        text.reserve(self.items.len() * 1024);
        for item in &self.items {
            krusty_yaml::emit_seq_items_preserving(std::slice::from_ref(item), &mut text)
                .map_err(WireError::from)?;
            item_ends.push(text.len());
        }
        self.write_rest(&mut text)?;
        Ok(Sent {
            text,
            items_start,
            item_ends,
        })
    }
}

/// The HTTP media type of a `ResourceList` in the binary node encoding
/// ([`ResourceList::to_binary`]).
pub const NODE_MEDIA_TYPE: &str = "application/vnd.krusty.node";

/// `true` when `content_type` (parameters and case ignored) is
/// [`NODE_MEDIA_TYPE`].
pub fn is_node_media_type(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .eq_ignore_ascii_case(NODE_MEDIA_TYPE)
}

impl ResourceList {
    /// Appends the list in the binary node encoding to `out`: the root
    /// node [`ResourceList::into_node`] makes (`apiVersion`, `kind`,
    /// `items`, then `functionConfig` and `results` when present),
    /// without copying the items.
    pub fn to_binary(&self, out: &mut Vec<u8>) {
        let mut encoder = krusty_yaml::binary::Encoder::new(out);
        let entries =
            3 + usize::from(self.function_config.is_some()) + usize::from(!self.results.is_empty());
        encoder.map(entries);
        encoder.node(&Node::plain("apiVersion"));
        encoder.node(&Node::plain(crate::wire::API_VERSION));
        encoder.node(&Node::plain("kind"));
        encoder.node(&Node::plain(crate::wire::KIND));
        encoder.node(&Node::plain("items"));
        encoder.seq(self.items.len());
        for item in &self.items {
            encoder.node(item);
        }
        if let Some(config) = &self.function_config {
            encoder.node(&Node::plain("functionConfig"));
            encoder.node(config);
        }
        if !self.results.is_empty() {
            let results = self.results.iter().map(crate::FnResult::to_node).collect();
            encoder.node(&Node::plain("results"));
            encoder.node(&Node::new(Value::Seq(results)));
        }
    }

    /// Reads a list written by [`ResourceList::to_binary`] (or any node in
    /// the binary encoding that is a `ResourceList`), checked as
    /// [`ResourceList::parse`] checks YAML.
    pub fn from_binary(bytes: &[u8]) -> Result<ResourceList, WireError> {
        let root = krusty_yaml::binary::decode(bytes).map_err(WireError::Binary)?;
        ResourceList::from_node(root)
    }
}

/// Reads `answer`, the output of a function that was sent `sent`, made
/// from `items`. Items whose text came back unchanged are taken out of
/// `items` (a null node is left in their place); the rest of the answer is
/// parsed.
pub fn parse_answer(
    answer: &str,
    sent: &Sent,
    items: &mut [Node],
) -> Result<ResourceList, WireError> {
    match reuse(answer, sent, items) {
        Some(list) => Ok(list),
        None => ResourceList::parse(answer),
    }
}

/// One item of the answer: a sent item that came back unchanged, or one
/// parsed from the answer.
enum Piece {
    Sent(usize),
    Parsed(Node),
}

/// The answer read with unchanged items reused; `None` when its layout
/// is not the one sent (then the whole answer must be parsed; `items` are
/// only touched on success).
fn reuse(answer: &str, sent: &Sent, items: &mut [Node]) -> Option<ResourceList> {
    let head = &sent.text[..sent.items_start];
    if sent.item_ends.is_empty() || items.len() != sent.item_ends.len() || !answer.starts_with(head)
    {
        return None;
    }
    let mut pieces = Vec::with_capacity(items.len());
    let mut pos = head.len();
    let mut next = 0;
    while starts_item(&answer[pos..]) {
        let rest = &answer[pos..];
        if let Some(text) = sent.item(next) {
            if rest.starts_with(text) && ends_item(&rest[text.len()..]) {
                pieces.push(Piece::Sent(next));
                pos += text.len();
                next += 1;
                continue;
            }
        }
        // A changed or new item (or several): up to the next line that
        // starts an item or a top-level key.
        let end = chunk_end(rest);
        let root = krusty_yaml::parse_stream(&rest[..end])
            .ok()?
            .into_iter()
            .find_map(|d| d.root)?;
        let Value::Seq(parsed) = root.value else {
            return None;
        };
        if parsed.iter().any(|item| item.as_map().is_none()) {
            return None;
        }
        pieces.extend(parsed.into_iter().map(Piece::Parsed));
        pos += end;
        next += 1;
    }
    let tail = &answer[pos..];
    let mut list = if tail.trim().is_empty() {
        ResourceList::default()
    } else {
        let rest =
            ResourceList::parse(&format!("{head}{tail}").replacen("items:\n", "", 1)).ok()?;
        if !rest.items.is_empty() {
            return None;
        }
        rest
    };
    list.items = pieces
        .into_iter()
        .map(|piece| match piece {
            Piece::Sent(i) => std::mem::replace(&mut items[i], Node::null()),
            Piece::Parsed(node) => node,
        })
        .collect();
    Some(list)
}

/// `true` when `rest` starts a sequence entry of the items list.
fn starts_item(rest: &str) -> bool {
    rest.starts_with("- ") || rest.starts_with("-\n")
}

/// `true` when an item's text may end right before `rest`: at the end, at
/// the next item, or at a top-level key.
fn ends_item(rest: &str) -> bool {
    rest.is_empty() || starts_item(rest) || !rest.starts_with([' ', '\t', '#', '\n', '\r', '-'])
}

/// The length of the sequence entries at the start of `rest`: up to the
/// next line that starts an item or a top-level key.
fn chunk_end(rest: &str) -> usize {
    let mut offset = match rest.find('\n') {
        Some(i) => i + 1,
        None => return rest.len(),
    };
    while offset < rest.len() {
        let line = &rest[offset..];
        if starts_item(line) || (ends_item(line) && !line.is_empty() && !line.starts_with('-')) {
            return offset;
        }
        offset += line.find('\n').map_or(line.len(), |i| i + 1);
    }
    rest.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> ResourceList {
        ResourceList::parse(text).unwrap()
    }

    const INPUT: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A # a\n  metadata:\n    name: a\n- kind: B\n  metadata:\n    name: b\n- kind: C\n  metadata:\n    name: c\nfunctionConfig:\n  kind: Config\n";

    /// Whatever the answer, the result is what a full parse gives.
    fn same_as_full_parse(answer: &str) {
        let sent_list = list(INPUT);
        let sent = sent_list.to_yaml_tracked().unwrap();
        assert_eq!(sent.text, sent_list.to_yaml().unwrap());
        let mut items = sent_list.items.clone();
        let got = parse_answer(answer, &sent, &mut items);
        let want = ResourceList::parse(answer);
        match (got, want) {
            (Ok(got), Ok(want)) => {
                let json = |l: &ResourceList| {
                    l.items
                        .iter()
                        .map(krusty_yaml::to_go_json)
                        .collect::<Vec<_>>()
                };
                assert_eq!(json(&got), json(&want), "{answer}");
                assert_eq!(got.results, want.results, "{answer}");
            }
            (Err(a), Err(b)) => assert_eq!(a, b),
            (got, want) => panic!("{answer}: {got:?} vs {want:?}"),
        }
    }

    #[test]
    fn unchanged_changed_added_removed_and_other_layouts() {
        let sent = list(INPUT).to_yaml_tracked().unwrap().text;
        same_as_full_parse(&sent);
        same_as_full_parse(&sent.replace("name: b", "name: bb"));
        same_as_full_parse(&sent.replace("    name: b\n", "    name: b\n    labels: {x: y}\n"));
        same_as_full_parse(&sent.replace("- kind: C\n  metadata:\n    name: c\n", ""));
        same_as_full_parse(&sent.replace(
            "- kind: B\n",
            "- kind: N\n  metadata: {name: n}\n- kind: B\n",
        ));
        same_as_full_parse(&format!(
            "{sent}results:\n- message: hi\n  severity: warning\n"
        ));
        same_as_full_parse(&sent.replace("- kind: B\n", "# moved\n- kind: B\n"));
        same_as_full_parse(
            &sent
                .replace("items:\n- ", "items:\n  - ")
                .replace("\n  ", "\n    "),
        );
        same_as_full_parse(
            "{\"apiVersion\":\"config.kubernetes.io/v1\",\"kind\":\"ResourceList\",\"items\":[]}",
        );
        same_as_full_parse(&sent.replace("- kind: C", "- &x kind: C"));
        same_as_full_parse(&sent.replace("name: c\n", "name: \"c\n- not an item\"\n"));
        same_as_full_parse("garbage: [");
    }

    #[test]
    fn the_binary_encoding_is_the_list_as_one_node() {
        let mut sent = list(INPUT);
        for with_results in [false, true] {
            if with_results {
                sent.results.push(crate::FnResult::warning("hi"));
                sent.function_config = None;
            }
            let mut bytes = Vec::new();
            sent.to_binary(&mut bytes);
            let mut whole = Vec::new();
            krusty_yaml::binary::encode(&sent.clone().into_node(), &mut whole);
            assert_eq!(bytes, whole);
            let back = ResourceList::from_binary(&bytes).unwrap();
            assert_eq!(back, sent);
            assert_eq!(back.to_yaml().unwrap(), sent.to_yaml().unwrap());
        }
        let err = ResourceList::from_binary(b"kind: ResourceList\n").unwrap_err();
        assert!(err.to_string().contains("byte 0"), "{err}");
        let mut bytes = Vec::new();
        krusty_yaml::binary::encode(&Node::plain("x"), &mut bytes);
        assert_eq!(
            ResourceList::from_binary(&bytes),
            Err(WireError::NotAMapping)
        );
        assert!(is_node_media_type("Application/Vnd.Krusty.Node; v=1"));
        assert!(!is_node_media_type("text/yaml"));
    }

    #[test]
    fn unchanged_items_are_not_parsed_again() {
        let sent_list = list(INPUT);
        let sent = sent_list.to_yaml_tracked().unwrap();
        let mut items = sent_list.items.clone();
        // Mark the originals: a reused item keeps the mark.
        items[0].set("reused", Node::plain("yes"));
        let got =
            parse_answer(&sent.text.replace("name: b", "name: bb"), &sent, &mut items).unwrap();
        assert_eq!(
            got.items[0].get("reused").and_then(Node::as_str),
            Some("yes")
        );
        assert!(got.items[1].get("reused").is_none());
    }
}
