//! The gRPC client for spec v2 function servers (`krm.function.v2`,
//! krusty-fn's proto): one `Run` per call over the server's unix socket,
//! on a tokio runtime made on first use.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use krusty_fn::grpc::{connect, CapabilitiesRequest, ConnectError, Format, RunRequest};

use super::answer::Answer;
use super::http::Error;

/// The runtime every gRPC call runs on (one thread: the build's).
fn runtime() -> Result<&'static tokio::runtime::Runtime, Error> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
        .ok_or_else(|| Error::Malformed("cannot start the gRPC client's runtime".into()))
}

/// Room in a response for what is not the list (`log`, `tag`, framing)
/// beyond the list's own bound.
const ENVELOPE: usize = 1 << 20;

/// Whether the server on `socket` reads and writes the binary node
/// encoding: its `Capabilities` list `FORMAT_KRUSTY_NODE` (a server
/// without the call, or that fails it, speaks YAML).
pub fn reads_nodes(socket: &Path, timeout: Duration) -> Result<bool, Error> {
    let address = format!("unix://{}", socket.display());
    let call = async {
        let mut client = connect(&address).await.map_err(connect_error)?;
        let mut call = tonic::Request::new(CapabilitiesRequest {});
        call.set_timeout(timeout);
        match client.capabilities(call).await {
            Ok(response) => Ok(response
                .into_inner()
                .formats
                .contains(&i32::from(Format::KrustyNode))),
            Err(status) => match status_error(&status) {
                e @ (Error::Connection(_) | Error::Timeout) => Err(e),
                _ => Ok(false),
            },
        }
    };
    runtime()?
        .block_on(async { tokio::time::timeout(timeout, call).await })
        .map_err(|_| Error::Timeout)?
}

fn connect_error(e: ConnectError) -> Error {
    match e {
        ConnectError::Transport(..) => Error::Connection(std::io::Error::other(e.to_string())),
        ConnectError::Address(why) => Error::Malformed(why.to_string()),
    }
}

/// Sends the ResourceList `body`, encoded as `format` (and asking for the
/// answer in the same), to the server on `socket`; a response larger than
/// `max_body` bytes (plus [`ENVELOPE`]) is refused before it is read, one
/// whose list is larger after it is.
pub fn run(
    socket: &Path,
    body: &[u8],
    format: Format,
    timeout: Duration,
    max_body: usize,
) -> Result<Answer, Error> {
    let address = format!("unix://{}", socket.display());
    let request = RunRequest {
        resource_list: body.to_vec(),
        format: format.into(),
        accept: format.into(),
        tag: String::new(),
    };
    let call = async {
        let mut client = connect(&address)
            .await
            .map_err(connect_error)?
            .max_decoding_message_size(max_body.saturating_add(ENVELOPE));
        // The deadline goes with the call (`grpc-timeout`): the function
        // is told when it passes (krusty_fn::cancel).
        let mut call = tonic::Request::new(request);
        call.set_timeout(timeout);
        client
            .run(call)
            .await
            .map_err(|status| status_error(&status))
    };
    let response = runtime()?
        .block_on(async { tokio::time::timeout(timeout, call).await })
        .map_err(|_| Error::Timeout)??
        .into_inner();
    if response.resource_list.len() > max_body {
        return Err(Error::TooLarge);
    }
    let kind = match Format::try_from(response.format) {
        Ok(Format::Json) => "application/json",
        Ok(Format::KrustyNode) => krusty_fn::answer::NODE_MEDIA_TYPE,
        _ => "text/yaml",
    };
    Ok(Answer {
        failure: response
            .failed
            .then(|| format!("its server reported a failed run: {}", response.log.trim())),
        content_type: Some(kind.to_string()),
        body: response.resource_list,
        log: if response.failed {
            String::new()
        } else {
            response.log
        },
    })
}

/// A gRPC status as a transport error: a server that is gone (or whose
/// connection broke) may be started again; others are answers.
fn status_error(status: &tonic::Status) -> Error {
    let broken = status.code() == tonic::Code::Unavailable
        || (status.code() == tonic::Code::Unknown && status.message().contains("transport"));
    // tonic's own refusal of a response over the decoding limit.
    let too_large = status.code() == tonic::Code::OutOfRange
        && status
            .message()
            .contains("decoded message length too large");
    match status.code() {
        _ if broken => Error::Connection(std::io::Error::other(status.to_string())),
        _ if too_large => Error::TooLarge,
        tonic::Code::DeadlineExceeded => Error::Timeout,
        code => Error::Malformed(format!("gRPC status {code:?}: {}", status.message())),
    }
}
