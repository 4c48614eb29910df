//! KRM function specification v2 over gRPC: the `krm.function.v2` types
//! and stubs generated from `proto/krm/function/v2/function.proto`, and
//! [`connect`], a client for `host:port` and `unix://` addresses.
//!
//! ```no_run
//! # async fn call() -> Result<(), Box<dyn std::error::Error>> {
//! use krusty_fn::grpc::{connect, Format, RunRequest};
//!
//! let mut client = connect("unix:///run/fn/grpc.sock").await?;
//! let answer = client
//!     .run(RunRequest {
//!         resource_list: b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n".to_vec(),
//!         format: Format::Yaml.into(),
//!         accept: Format::Yaml.into(),
//!         tag: String::new(),
//!     })
//!     .await?
//!     .into_inner();
//! assert!(!answer.failed);
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper_util::rt::TokioIo;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::serve::addr::{Address, AddressError};

#[allow(clippy::all, clippy::pedantic)]
mod generated {
    include!("grpc/krm.function.v2.rs");
}

pub use generated::function_service_client::FunctionServiceClient;
pub use generated::function_service_server::{FunctionService, FunctionServiceServer};
pub use generated::{CapabilitiesRequest, CapabilitiesResponse, Format, RunRequest, RunResponse};

/// The full name of the service, as the health service knows it.
pub const SERVICE_NAME: &str = "krm.function.v2.FunctionService";

/// The largest message (request or response) krusty-fn's servers and
/// [`connect`]'s clients handle: 256 MiB.
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// A client of the function server at `address` (`host:port`,
/// `unix:///path`), accepting messages up to [`MAX_MESSAGE_BYTES`].
pub async fn connect(address: &str) -> Result<FunctionServiceClient<Channel>, ConnectError> {
    let channel = channel(address).await?;
    Ok(FunctionServiceClient::new(channel)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES))
}

/// A gRPC channel to `address` (`host:port`, `unix:///path`), for any
/// service the server offers (the function service, the health service).
pub async fn channel(address: &str) -> Result<Channel, ConnectError> {
    let parsed = Address::parse(address).map_err(ConnectError::Address)?;
    let failed = |e: tonic::transport::Error| ConnectError::Transport(address.to_string(), e);
    match parsed {
        Address::Tcp(host_port) => Endpoint::from_shared(format!("http://{host_port}"))
            .map_err(failed)?
            .connect()
            .await
            .map_err(failed),
        // The URI is not used: the connector dials the socket.
        Address::Unix(path) => Endpoint::from_static("http://localhost")
            .connect_with_connector(UnixConnector(path))
            .await
            .map_err(failed),
    }
}

/// Why [`connect`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The address is not `host:port` nor `unix:///path`.
    #[error(transparent)]
    Address(AddressError),
    /// The server cannot be reached at the address (the address).
    #[error("connecting to {0}: {1}")]
    Transport(String, #[source] tonic::transport::Error),
}

/// Dials a unix socket for every connection the channel opens.
#[derive(Clone)]
struct UnixConnector(PathBuf);

type Dialing =
    Pin<Box<dyn Future<Output = std::io::Result<TokioIo<tokio::net::UnixStream>>> + Send>>;

impl tower_service::Service<Uri> for UnixConnector {
    type Response = TokioIo<tokio::net::UnixStream>;
    type Error = std::io::Error;
    type Future = Dialing;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Uri) -> Dialing {
        let path = self.0.clone();
        Box::pin(async move { Ok(TokioIo::new(tokio::net::UnixStream::connect(path).await?)) })
    }
}
