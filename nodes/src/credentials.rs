//! Reading n8n's credential shapes into nodekit settings.

/// n8n's `openAiApi` credential (`apiKey`, optional `url` as the API root,
/// optional `headerName`/`headerValue`, optional `azureApiVersion`) for `model`.
#[cfg(feature = "openai")]
pub fn openai(
    credential: &serde_json::Value,
    model: &str,
) -> nodekit::Result<nodekit::model::openai::OpenAiConfig> {
    let text = |k: &str| text(credential, k);
    let api_key = required(credential, "openAiApi", "apiKey")?;
    let mut config = nodekit::model::openai::OpenAiConfig::new(api_key, model);
    if let Some(url) = text("url") {
        config.base_url = url.to_owned();
    }
    if let (Some(name), Some(value)) = (text("headerName"), text("headerValue")) {
        config.headers.push((name.to_owned(), value.to_owned()));
    }
    config.azure_api_version = text("azureApiVersion").map(str::to_owned);
    Ok(config)
}

/// The credential `name` of a provider that serves OpenAI's API at
/// `default_url` (`apiKey`, and optionally `url` as the API root) for `model`.
#[cfg(feature = "openai")]
pub fn openai_host(
    credential: &serde_json::Value,
    name: &str,
    default_url: &str,
    model: &str,
) -> nodekit::Result<nodekit::model::openai::OpenAiConfig> {
    let api_key = required(credential, name, "apiKey")?;
    let url = text(credential, "url").unwrap_or(default_url);
    Ok(nodekit::model::openai::OpenAiConfig::new(api_key, model).base_url(url))
}

/// n8n's `azureOpenAiApi` credential (`apiKey`, `resourceName` or
/// `endpoint`, `apiVersion`) for the deployment `deployment`.
#[cfg(feature = "openai")]
pub fn azure_openai(
    credential: &serde_json::Value,
    deployment: &str,
) -> nodekit::Result<nodekit::model::openai::OpenAiConfig> {
    const NAME: &str = "azureOpenAiApi";
    let api_key = required(credential, NAME, "apiKey")?;
    let root = match text(credential, "endpoint") {
        Some(endpoint) => endpoint.trim_end_matches('/').to_owned(),
        None => format!(
            "https://{}.openai.azure.com",
            required(credential, NAME, "resourceName")?
        ),
    };
    let mut config = nodekit::model::openai::OpenAiConfig::new(api_key, deployment)
        .base_url(format!("{root}/openai/deployments/{deployment}"));
    config.azure_api_version = Some(
        text(credential, "apiVersion")
            .unwrap_or(AZURE_API_VERSION)
            .to_owned(),
    );
    Ok(config)
}

/// The `api-version` of n8n's Azure OpenAI credential when none is set.
#[cfg(feature = "openai")]
const AZURE_API_VERSION: &str = "2025-03-01-preview";

/// n8n's `anthropicApi` credential (`apiKey`, optional `url` as the API
/// root, and, when `header` is on, `headerName`/`headerValue`) for `model`.
#[cfg(feature = "anthropic")]
pub fn anthropic(
    credential: &serde_json::Value,
    model: &str,
) -> nodekit::Result<nodekit::model::anthropic::AnthropicConfig> {
    let text = |k: &str| text(credential, k);
    let api_key = required(credential, "anthropicApi", "apiKey")?;
    let mut config = nodekit::model::anthropic::AnthropicConfig::new(api_key, model);
    if let Some(url) = text("url") {
        config.base_url = url.trim_end_matches('/').to_owned();
    }
    let header = credential
        .get("header")
        .and_then(serde_json::Value::as_bool);
    if header == Some(true)
        && let (Some(name), Some(value)) = (text("headerName"), text("headerValue"))
    {
        config.headers.push((name.to_owned(), value.to_owned()));
    }
    Ok(config)
}

/// Field `key` of a credential, when it is a text that is not empty.
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "ollama",
    feature = "mcp-client"
))]
pub fn text<'a>(credential: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    credential
        .get(key)
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Field `key` of credential type `name`, or an error saying it is missing.
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "ollama",
    feature = "mcp-client"
))]
pub fn required<'a>(
    credential: &'a serde_json::Value,
    name: &str,
    key: &str,
) -> nodekit::Result<&'a str> {
    text(credential, key).ok_or_else(|| nodekit::Error::InvalidCredentials {
        credential: name.into(),
        problem: format!("has no `{key}`"),
    })
}

/// n8n's `postgres` credential. serde's message is not shown: it may quote
/// a value, and a value may be the password.
#[cfg(any(feature = "postgres", feature = "vector-store-postgres"))]
pub fn postgres(
    credential: &serde_json::Value,
) -> nodekit::Result<nodekit::postgres::PostgresConfig> {
    serde_json::from_value(credential.clone()).map_err(|_| nodekit::Error::InvalidCredentials {
        credential: "postgres".into(),
        problem: "is invalid; it needs host, database and user (text), and optionally port (a number), password and ssl (text)".into(),
    })
}

/// The file of nodekit's `sqlite` credential (`{"databasePath": "..."}`).
#[cfg(feature = "vector-store-sqlite")]
pub fn sqlite_path(credential: &serde_json::Value) -> nodekit::Result<String> {
    credential
        .get("databasePath")
        .and_then(serde_json::Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .map(str::to_owned)
        .ok_or_else(|| nodekit::Error::InvalidCredentials {
            credential: "sqlite".into(),
            problem: "has no `databasePath` (the SQLite file)".into(),
        })
}
