//! The HTTP client side that nodekit's model providers and its MCP client
//! share, so that a provider's crate is its wire format and nothing else:
//!
//! - [`Transport`]: one model server, with retries that honour
//!   `Retry-After`, timeouts, cancellation, capped bodies, streams of
//!   server-sent events or newline-delimited JSON ([`Transport::events`])
//!   and provider errors ([`Transport::provider_error`]) with the
//!   credentials hidden, and a
//!   streamed answer read into chunks by a provider's [`StreamParser`]
//!   ([`Transport::chunk_stream`]);
//! - [`Authenticate`]: how a request says who sends it, with
//!   [`Bearer`], [`HeaderKey`] and [`QueryKey`], open to any other scheme
//!   (a signature over the request, a refreshed token);
//! - [`http_client`] and [`shared_http_client`]: reqwest clients with TLS
//!   on rustls, the process's connection pool shared;
//! - [`sse`]: a Server-Sent Events parser, which also reads
//!   newline-delimited JSON.
//!
//! Errors are nodekit-core's [`ModelError`](nodekit_core::model::ModelError),
//! which keeps reqwest's error as its `source()`.

mod auth;
mod chunks;
mod client;
pub mod sse;
mod transport;

pub use auth::{Authenticate, Bearer, HeaderKey, QueryKey, Request};
pub use chunks::StreamParser;
pub use client::{http_client, shared_http_client};
pub use transport::{Transport, TransportBuilder, error_fields, timeout_secs};
