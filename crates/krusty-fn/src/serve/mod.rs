//! Specification v2: a function served over HTTP and gRPC.
//!
//! [`crate::run`] serves when started with `--http-addr ADDR` or
//! `--grpc-addr ADDR` (or, without arguments, with
//! `KRM_FUNCTION_HTTP_ADDRESS` or `KRM_FUNCTION_GRPC_ADDRESS` set): both
//! servers at once when both are given. Each request is processed as
//! specification v1 processes stdin, so the answer's bytes are those v1
//! writes on stdout. The wire contract is in `docs/function-servers.md`.
//!
//! SIGTERM, SIGINT or SIGHUP stops the servers: they stop accepting
//! connections, give the requests under way up to [`SHUTDOWN_GRACE`] to
//! be answered, close every connection still open after that (a client
//! that never finishes its request does not keep the process up), remove
//! the unix sockets they created and return. An HTTP connection must
//! also send each request's headers within 10 seconds, or be closed.

pub mod addr;
#[cfg(feature = "server")]
mod eval;
#[cfg(feature = "server")]
mod grpc;
#[cfg(feature = "server")]
mod http;
#[cfg(feature = "server")]
mod listen;

pub use addr::{Address, AddressError};

/// How long the requests under way may take to be answered once a
/// server is told to stop; connections still open after that are closed.
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

#[cfg(feature = "server")]
pub use server::{serve, serve_with, Options, ServeError};

#[cfg(feature = "server")]
mod server {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::sync::watch;

    use super::addr::{Address, AddressError};
    use super::listen::Listener;
    use crate::run::{FnError, ServerAddresses};
    use crate::wire::ResourceList;

    /// Why a server does not start, or stops on a failure.
    #[derive(Debug, thiserror::Error)]
    #[non_exhaustive]
    pub enum ServeError {
        /// An address that does not parse.
        #[error(transparent)]
        Address(#[from] AddressError),
        /// The runtime the servers run on does not start.
        #[error("starting the server runtime: {0}")]
        Runtime(#[source] std::io::Error),
        /// The stop signals cannot be watched.
        #[error("watching signals: {0}")]
        Signals(#[source] std::io::Error),
        /// An address cannot be listened on.
        #[error("listening on {address}: {source}")]
        Listen {
            /// The address.
            address: Address,
            /// Why.
            source: std::io::Error,
        },
        /// The gRPC server fails.
        #[error("serving gRPC on {address}: {source}")]
        Grpc {
            /// The address it listens on.
            address: String,
            /// Why.
            source: tonic::transport::Error,
        },
        /// A server's task panics or is cancelled.
        #[error("server task: {0}")]
        Task(#[source] tokio::task::JoinError),
    }

    /// How the servers answer, besides the function itself.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Options {
        /// How long a gRPC client may reuse an answer for a request with
        /// the same tag (`RunResponse.ttl`); `None`: not at all. Set it
        /// only for a function whose output depends on its input alone.
        pub cache_ttl: Option<Duration>,
    }

    /// Serves `f` on `addresses` until SIGTERM, SIGINT or SIGHUP, then
    /// lets the requests under way finish (for at most
    /// [`super::SHUTDOWN_GRACE`], then closes the connections left),
    /// removes the unix sockets it created and returns. Each server announces itself on stderr once it accepts
    /// connections: `serving HTTP on ADDR` (`ADDR` with the port a `:0`
    /// address got).
    pub fn serve<F>(addresses: &ServerAddresses, f: F) -> Result<(), ServeError>
    where
        F: Fn(&mut ResourceList) -> Result<(), FnError> + Send + Sync + 'static,
    {
        serve_with(addresses, &Options::default(), f)
    }

    /// [`serve`] with [`Options`].
    pub fn serve_with<F>(
        addresses: &ServerAddresses,
        options: &Options,
        f: F,
    ) -> Result<(), ServeError>
    where
        F: Fn(&mut ResourceList) -> Result<(), FnError> + Send + Sync + 'static,
    {
        let parse = |a: &Option<String>| a.as_deref().map(Address::parse).transpose();
        let (http, grpc) = (parse(&addresses.http)?, parse(&addresses.grpc)?);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(ServeError::Runtime)?;
        let function: super::eval::Function = Arc::new(f);
        let served = runtime.block_on(run_servers(http, grpc, function, options.clone()));
        // A function still running on a blocking thread (its request cut
        // off by the grace period) must not keep the server from
        // returning.
        runtime.shutdown_timeout(Duration::from_millis(200));
        served
    }

    async fn run_servers(
        http: Option<Address>,
        grpc: Option<Address>,
        function: super::eval::Function,
        options: Options,
    ) -> Result<(), ServeError> {
        // Signals are watched before binding: a SIGTERM sent as soon as the
        // server is announced must stop it gracefully.
        let (stop_tx, stop) = watch::channel(false);
        let signals = super::listen::stop_on_signals(stop_tx)?;
        let http = match http {
            Some(a) => Some(Listener::bind(&a).await?),
            None => None,
        };
        let grpc = match grpc {
            Some(a) => Some(Listener::bind(&a).await?),
            None => None,
        };
        let mut tasks = Vec::new();
        if let Some(listener) = http {
            eprintln!("serving HTTP on {}", listener.describe());
            let (f, stop) = (function.clone(), stop.clone());
            tasks.push(tokio::spawn(super::http::serve(listener, f, stop)));
        }
        if let Some(listener) = grpc {
            eprintln!("serving gRPC on {}", listener.describe());
            let (f, stop) = (function.clone(), stop.clone());
            tasks.push(tokio::spawn(super::grpc::serve(
                listener,
                f,
                options.cache_ttl,
                stop,
            )));
        }
        let mut failure = None;
        let finished = {
            let joined = async {
                for task in tasks.iter_mut() {
                    match task.await {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => failure = failure.take().or(Some(e)),
                        Err(e) => failure = failure.take().or(Some(ServeError::Task(e))),
                    }
                }
            };
            let grace_over = async {
                super::listen::stopped(stop).await;
                tokio::time::sleep(super::SHUTDOWN_GRACE).await;
            };
            tokio::select! {
                () = joined => true,
                () = grace_over => false,
            }
        };
        if !finished {
            eprintln!(
                "closing the connections still open {} s after the stop signal",
                super::SHUTDOWN_GRACE.as_secs()
            );
            // Dropping a server's task drops its listener, hence removes
            // its unix socket; awaiting it waits for that.
            for task in &tasks {
                task.abort();
            }
            for task in tasks {
                let _ = task.await;
            }
        }
        signals.abort();
        failure.map_or(Ok(()), Err)
    }
}
