//! The gRPC server: `krm.function.v2.FunctionService` and the standard
//! health service.

use std::time::Duration;

use tokio::sync::watch;
use tokio_stream::wrappers::{TcpListenerStream, UnixListenerStream};
use tonic::{Request, Response, Status};

use super::eval::{answer, Encoding, Function, Refusal};
use super::listen::{stopped, Listener};
use super::ServeError;
use crate::grpc::{
    CapabilitiesRequest, CapabilitiesResponse, Format, FunctionService, FunctionServiceServer,
    RunRequest, RunResponse, MAX_MESSAGE_BYTES,
};

/// The specification versions every krusty-fn function conforms to.
const SPEC_VERSIONS: [&str; 2] = ["v1", "v2"];

/// Answers calls on `listener` until `stop`, then waits for the calls
/// under way.
pub(crate) async fn serve(
    listener: Listener,
    function: Function,
    cache_ttl: Option<Duration>,
    stop: watch::Receiver<bool>,
) -> Result<(), ServeError> {
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<FunctionServiceServer<Service>>().await;
    let service = FunctionServiceServer::new(Service {
        function,
        cache_ttl,
    })
    .max_decoding_message_size(MAX_MESSAGE_BYTES)
    .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let router = tonic::transport::Server::builder()
        .add_service(health_service)
        .add_service(service);
    let described = listener.describe();
    let served = match listener {
        Listener::Tcp(l) => {
            router
                .serve_with_incoming_shutdown(TcpListenerStream::new(l), stopped(stop))
                .await
        }
        Listener::Unix(l, socket_file) => {
            let served = router
                .serve_with_incoming_shutdown(UnixListenerStream::new(l), stopped(stop))
                .await;
            drop(socket_file);
            served
        }
    };
    served.map_err(|source| ServeError::Grpc {
        address: described,
        source,
    })
}

struct Service {
    function: Function,
    cache_ttl: Option<Duration>,
}

#[tonic::async_trait]
impl FunctionService for Service {
    async fn run(&self, request: Request<RunRequest>) -> Result<Response<RunResponse>, Status> {
        let deadline = match request.metadata().get("grpc-timeout") {
            None => None,
            Some(value) => {
                let timeout = value
                    .to_str()
                    .ok()
                    .and_then(crate::cancel::parse_timeout)
                    .ok_or_else(|| Status::invalid_argument("malformed grpc-timeout"))?;
                std::time::Instant::now().checked_add(timeout)
            }
        };
        let cancellation = crate::cancel::Cancellation::new(deadline);
        let request = request.into_inner();
        let given = encoding(format_of(request.format, "format")?);
        let accept = encoding(format_of(request.accept, "accept")?);
        match answer(
            self.function.clone(),
            request.resource_list,
            given,
            accept,
            cancellation,
        )
        .await
        {
            Ok(answer) => Ok(Response::new(RunResponse {
                resource_list: answer.body,
                format: match accept {
                    Encoding::Yaml => Format::Yaml,
                    Encoding::Json => Format::Json,
                    Encoding::Node => Format::KrustyNode,
                }
                .into(),
                failed: answer.failed,
                log: answer.log,
                tag: request.tag,
                ttl: self
                    .cache_ttl
                    .and_then(|ttl| prost_types::Duration::try_from(ttl).ok()),
            })),
            Err(Refusal::BadInput(message)) => Err(Status::invalid_argument(message)),
            Err(Refusal::Crashed(message)) => Err(Status::internal(message)),
            Err(Refusal::DeadlineExceeded) => Err(Status::deadline_exceeded(
                "the request's deadline passed before the answer was ready",
            )),
        }
    }

    async fn capabilities(
        &self,
        _: Request<CapabilitiesRequest>,
    ) -> Result<Response<CapabilitiesResponse>, Status> {
        Ok(Response::new(CapabilitiesResponse {
            spec_versions: SPEC_VERSIONS.iter().map(|v| v.to_string()).collect(),
            formats: vec![
                Format::Yaml.into(),
                Format::Json.into(),
                Format::KrustyNode.into(),
            ],
            max_message_bytes: MAX_MESSAGE_BYTES as u64,
        }))
    }
}

fn format_of(value: i32, field: &str) -> Result<Format, Status> {
    Format::try_from(value).map_err(|_| {
        Status::invalid_argument(format!(
            "{field} {value} is not FORMAT_UNSPECIFIED (0), FORMAT_YAML (1), FORMAT_JSON (2) nor FORMAT_KRUSTY_NODE (3)"
        ))
    })
}

/// How a list in `format` is read or written (unspecified: YAML).
fn encoding(format: Format) -> Encoding {
    match format {
        Format::Json => Encoding::Json,
        Format::KrustyNode => Encoding::Node,
        Format::Yaml | Format::Unspecified => Encoding::Yaml,
    }
}
