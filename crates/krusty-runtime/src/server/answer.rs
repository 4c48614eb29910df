//! A server's answer read as a function's output, exactly as a spec v1
//! function's stdout is read.

use krusty_fn::{ResourceList, Sent};
use krusty_yaml::Node;

use crate::Failed;

/// What a server answered, whatever the protocol.
#[derive(Debug)]
pub struct Answer {
    /// `None`: the function ran; else how the server says it failed
    /// (an HTTP status, gRPC's `failed`).
    pub failure: Option<String>,
    /// The body's media type, for messages.
    pub content_type: Option<String>,
    /// The body: a ResourceList (or, on failure, maybe a message).
    pub body: Vec<u8>,
    /// What the function wrote for this call that a spec v1 run writes on
    /// stderr (gRPC's `log`), printed when the call succeeds, as a v1
    /// function's stderr is.
    pub log: String,
}

/// The list in a server's answer to a list made from `items` (and sent
/// as the YAML `sent`, if it was). A failed run keeps the results its body
/// holds. A body in the binary node encoding (its `Content-Type`) is
/// decoded; a YAML one is read as a spec v1 function's stdout.
pub(super) fn read(
    answer: Answer,
    sent: Option<&Sent>,
    mut items: Vec<Node>,
) -> Result<ResourceList, Failed> {
    let in_nodes = answer
        .content_type
        .as_deref()
        .is_some_and(krusty_fn::answer::is_node_media_type);
    let parsed = if in_nodes {
        ResourceList::from_binary(&answer.body)
    } else {
        let text = std::str::from_utf8(&answer.body).map_err(|_| krusty_fn::WireError::NotUtf8);
        match (&answer.failure, sent) {
            (None, Some(sent)) => {
                text.and_then(|body| krusty_fn::parse_answer(body, sent, &mut items))
            }
            _ => text.and_then(ResourceList::parse),
        }
    };
    crate::free_later(items);
    let start = || {
        let body = String::from_utf8_lossy(&answer.body);
        body.chars().take(200).collect::<String>()
    };
    if let Some(failure) = answer.failure {
        return Err(match parsed {
            Ok(list) => Failed {
                message: failure,
                results: list.results,
            },
            Err(_) => Failed::new(format!("{failure}: {:?}", start())),
        });
    }
    if parsed.is_ok() && !answer.log.is_empty() {
        use std::io::Write;
        let _ = std::io::stderr().lock().write_all(answer.log.as_bytes());
    }
    parsed.map_err(|e| {
        let kind = answer.content_type.as_deref().unwrap_or("no Content-Type");
        Failed::new(format!(
            "its server did not answer with a ResourceList: {e}; its answer ({kind}) starts with {:?}",
            start()
        ))
    })
}
