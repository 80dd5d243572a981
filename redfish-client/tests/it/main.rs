//! Integration tests of the client against wiremock servers (a fresh one per test) serving the
//! fixture trees, plus local TLS and raw TCP servers for what wiremock cannot fake.
#![allow(clippy::unwrap_used)]

mod auth;
mod dell;
mod faults;
mod fixtures;
mod operations;
mod redirects;
mod tls;

use redfish_client::{AuthMethod, Client, Credentials, RetryPolicy};
use std::time::Duration;

/// A client for `url` with the mock's credentials and fast retries.
fn client(url: &str, method: AuthMethod) -> Client {
    Client::builder(url)
        .credentials(Credentials::new(rftune_tests::USERNAME, rftune_tests::PASSWORD))
        .auth_method(method)
        .retry(fast_retry())
        .build()
        .unwrap()
}

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        max_elapsed: Duration::from_secs(10),
    }
}
