//! Specification v2: a function served over HTTP and gRPC.
//!
//! [`crate::run`] serves when started with `--http-addr ADDR` or
//! `--grpc-addr ADDR` (or, without arguments, with
//! `KRM_FUNCTION_HTTP_ADDRESS` or `KRM_FUNCTION_GRPC_ADDRESS` set); see
//! `docs/function-servers.md` for the wire contract.

pub mod addr;

pub use addr::Address;
