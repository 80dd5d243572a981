//! Integration tests of the client against wiremock servers (a fresh one per test) serving the
//! fixture trees, plus local TLS and raw TCP servers for what wiremock cannot fake.
#![allow(clippy::unwrap_used)]

mod auth;
mod dell;
mod faults;
mod fixtures;
mod messages;
mod operations;
mod redirects;
mod required;
mod tls;

use redfish_client::{AuthMethod, Client, Credentials, RetryPolicy};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

/// What a [`scripted_server`] does with one connection.
enum Answer {
    /// Reads the request, writes these bytes, closes.
    Reply(Vec<u8>),
    /// Reads the request and closes without a word (a reset, as the client sees it).
    Close,
    /// Reads the request and holds the connection open without answering.
    Silent,
}

/// A loopback HTTP server that handles its n-th connection by the n-th answer; connections after
/// the script get no answer. Returns its base URL.
async fn scripted_server(script: Vec<Answer>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        for answer in script {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 8192];
            let mut seen = Vec::new();
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            match answer {
                Answer::Reply(bytes) => {
                    let _ = sock.write_all(&bytes).await;
                    let _ = sock.shutdown().await;
                }
                Answer::Close => drop(sock),
                Answer::Silent => held.push(sock),
            }
        }
        // Keep silent connections open until the test ends.
        std::future::pending::<()>().await;
    });
    format!("http://{addr}")
}

/// An HTTP/1.1 answer that closes the connection.
fn http_answer(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str("Connection: close\r\n\r\n");
    let mut r = r.into_bytes();
    r.extend_from_slice(body);
    r
}
