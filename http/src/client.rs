//! The process's HTTP clients, with nodekit's TLS (rustls on ring) set up.

/// A `reqwest` client builder with nodekit's TLS set up: rustls on ring,
/// installed as the process's default provider unless one is installed
/// already. nodekit's models and HTTP tools build their clients with it;
/// build yours with it too, since reqwest alone (without a provider
/// feature) panics when it builds a client.
pub fn http_client() -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Err: the application installed its own first, which is then used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

/// The process's client from [`http_client`] with these connect and read
/// timeouts (`None`: reqwest's defaults), built once and shared. A client
/// holds the connection pool and the TLS settings: a model or HTTP tool
/// made anew for each run (each message of a chat server, each execution
/// in n8n) reuses the connections and TLS sessions of the runs before,
/// instead of building its TLS settings and connecting again.
pub fn shared_http_client(
    timeout: Option<std::time::Duration>,
) -> reqwest::Result<reqwest::Client> {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    use std::time::Duration;
    static CLIENTS: LazyLock<Mutex<HashMap<Option<Duration>, reqwest::Client>>> =
        LazyLock::new(Default::default);
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(client) = clients.get(&timeout) {
        return Ok(client.clone());
    }
    let mut builder = http_client();
    if let Some(timeout) = timeout {
        builder = builder.connect_timeout(timeout).read_timeout(timeout);
    }
    let client = builder.build()?;
    clients.insert(timeout, client.clone());
    Ok(client)
}
