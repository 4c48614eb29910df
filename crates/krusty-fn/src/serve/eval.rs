//! One request's processing, shared by the HTTP and gRPC servers: the
//! same steps as specification v1 (parse, run, write), off the async
//! threads, with a panic in the function turned into an error answer, and
//! the request's deadline and cancellation handed to the function
//! ([`crate::cancel`]).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::cancel::Cancellation;
use crate::run::{evaluate, FnError};
use crate::wire::ResourceList;

/// The function as the servers share it between requests.
pub(crate) type Function = Arc<dyn Fn(&mut ResourceList) -> Result<(), FnError> + Send + Sync>;

/// The encoding of a ResourceList on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// YAML (`text/yaml` and its other spellings over HTTP): byte for byte
    /// what specification v1 writes on stdout.
    Yaml,
    /// `application/json`: the same list as one JSON object.
    Json,
    /// [`crate::answer::NODE_MEDIA_TYPE`] (gRPC `FORMAT_KRUSTY_NODE`): the
    /// list's nodes in krusty-yaml's binary encoding, exactly as the
    /// function left them.
    Node,
}

/// A processed request.
pub(crate) struct Answer {
    /// The output ResourceList, encoded.
    pub(crate) body: Vec<u8>,
    /// The function failed (specification v1: exit code 1).
    pub(crate) failed: bool,
    /// What specification v1 writes on stderr for this input.
    pub(crate) log: String,
}

/// A request that got no output list.
pub(crate) enum Refusal {
    /// The input is not a ResourceList.
    BadInput(String),
    /// The function panicked, or the output could not be encoded.
    Crashed(String),
    /// The request's deadline passed before the answer was ready.
    DeadlineExceeded,
}

/// Cancels a request whose answer is dropped before it is ready: the
/// server drops it when its client goes away.
struct CancelOnDrop(Option<Cancellation>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(request) = self.0.take() {
            request.cancel();
        }
    }
}

/// Processes `input` (encoded as `given` says) on a blocking thread, as
/// the request `request` (its deadline, and its cancellation when the
/// answer is dropped or late).
pub(crate) async fn answer(
    function: Function,
    input: Vec<u8>,
    given: Encoding,
    accept: Encoding,
    request: Cancellation,
) -> Result<Answer, Refusal> {
    let mut guard = CancelOnDrop(Some(request.clone()));
    let deadline = request.deadline();
    let running = request.clone();
    let task = tokio::task::spawn_blocking(move || {
        running.run(|| answer_now(&*function, &input, given, accept))
    });
    let joined = match deadline {
        Some(at) => match tokio::time::timeout_at(at.into(), task).await {
            Ok(joined) => joined,
            Err(_) => return Err(Refusal::DeadlineExceeded),
        },
        None => task.await,
    };
    guard.0 = None;
    joined.unwrap_or_else(|e| Err(Refusal::Crashed(format!("the function's task failed: {e}"))))
}

fn answer_now(
    function: &(dyn Fn(&mut ResourceList) -> Result<(), FnError> + Send + Sync),
    input: &[u8],
    given: Encoding,
    accept: Encoding,
) -> Result<Answer, Refusal> {
    let bad = |e: &dyn std::fmt::Display| {
        Refusal::BadInput(format!("reading the input ResourceList: {e}"))
    };
    let mut list = match given {
        // YAML and JSON share the YAML 1.2 parser (JSON is YAML).
        Encoding::Yaml | Encoding::Json => {
            let text = std::str::from_utf8(input).map_err(|e| bad(&e))?;
            ResourceList::parse(text).map_err(|e| bad(&e))?
        }
        Encoding::Node => ResourceList::from_binary(input).map_err(|e| bad(&e))?,
    };
    let evaluated =
        catch_unwind(AssertUnwindSafe(|| evaluate(&mut list, function))).map_err(|panic| {
            Refusal::Crashed(format!("the function panicked: {}", panic_message(&*panic)))
        })?;
    let body = match accept {
        Encoding::Yaml => list.to_yaml().map(String::into_bytes),
        Encoding::Json => Ok(krusty_yaml::to_go_json(&list.into_node()).into_bytes()),
        Encoding::Node => {
            let mut bytes = Vec::with_capacity(input.len() + input.len() / 8);
            list.to_binary(&mut bytes);
            Ok(bytes)
        }
    }
    .map_err(|e| Refusal::Crashed(format!("writing the output ResourceList: {e}")))?;
    Ok(Answer {
        body,
        failed: evaluated.failed,
        log: evaluated.stderr,
    })
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}
