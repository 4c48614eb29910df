//! A server's HTTP answer read as a function's output, exactly as a spec
//! v1 function's stdout is read.

use krusty_fn::{ResourceList, Sent};
use krusty_yaml::Node;

use super::http::Response;
use crate::Failed;

/// The list in a server's answer to `sent`, made from `items`. A status
/// other than 2xx is a failed run; results in its body are kept.
pub(super) fn read(
    response: Response,
    sent: &Sent,
    mut items: Vec<Node>,
) -> Result<ResourceList, Failed> {
    let text = std::str::from_utf8(&response.body).map_err(|_| krusty_fn::WireError::NotUtf8);
    let ok = (200..300).contains(&response.status);
    let parsed = if ok {
        text.and_then(|answer| krusty_fn::parse_answer(answer, sent, &mut items))
    } else {
        text.and_then(ResourceList::parse)
    };
    crate::free_later(items);
    let start = || {
        let body = String::from_utf8_lossy(&response.body);
        body.chars().take(200).collect::<String>()
    };
    if !ok {
        let status = format!(
            "its server answered HTTP {} {}",
            response.status, response.reason
        );
        return Err(match parsed {
            Ok(list) => Failed {
                message: status,
                results: list.results,
            },
            Err(_) => Failed::new(format!("{status}: {:?}", start())),
        });
    }
    parsed.map_err(|e| {
        let kind = response.content_type.as_deref().unwrap_or("no Content-Type");
        Failed::new(format!(
            "its server did not answer with a ResourceList: {e}; its answer ({kind}) starts with {:?}",
            start()
        ))
    })
}
