//! Nodes of an imaginary `n8n-nodes-weather` package, written the way an
//! outside author writes them: only `nodekit` is needed.

use std::sync::Arc;

use nodekit::history::redis::RedisChatHistory;
use nodekit::memory::MemoryOptions;
use nodekit::prelude::*;
use nodekit::schemars::JsonSchema;
use nodekit::serde::{Deserialize, Serialize};

pub mod jsonl_history;

/// Units for temperatures.
///
/// The derives come through `nodekit`, so the crate needs no serde or
/// schemars dependency of its own; `crate = ...` tells them where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(crate = "nodekit::serde", rename_all = "lowercase")]
#[schemars(crate = "nodekit::schemars")]
pub enum Units {
    /// Degrees Celsius.
    #[schemars(title = "Celsius")]
    Metric,
    /// Degrees Fahrenheit.
    #[schemars(title = "Fahrenheit")]
    Imperial,
}

/// Get the weather forecast for a city.
///
/// An agent calls this tool with the city and the number of days it wants.
#[ai_node(
    name = "weatherForecastTool",
    display_name = "Weather Forecast",
    output = tool,
    credentials = ["weatherApi"],
    package = "n8n-nodes-weather"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct WeatherForecastTool {
    /// The city to forecast, e.g. "Berlin".
    #[from_ai]
    pub city: String,
    /// How many days ahead, 1 to 7.
    #[from_ai(default = 3)]
    #[param(min = 1, max = 7)]
    pub days: u32,
    /// Units the temperatures are given in.
    #[param(default = Units::Metric)]
    pub units: Units,
}

/// Store chat history in Redis.
///
/// n8n's Redis memory node, written with nodekit.
#[ai_node(
    name = "memoryRedis",
    display_name = "Redis Memory",
    output = memory,
    credentials = ["redis"],
    package = "n8n-nodes-weather"
)]
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRedis {
    /// Key that separates one conversation from another.
    #[param(
        display_name = "Session ID",
        default = "={{ $json.sessionId }}",
        required
    )]
    pub session_id: String,
    /// Number of messages to keep in context.
    #[param(default = 10, min = 1)]
    pub context_window: u32,
    /// Time-to-live for chat history.
    #[param(display_name = "TTL (seconds)", default = 3600, min = 1)]
    pub ttl: u64,
}

impl SupplyData for MemoryRedis {
    async fn supply_data(self, ctx: &SupplyContext) -> nodekit::Result<Supply> {
        let credentials = ctx.credentials("redis")?;
        let host = credentials["host"].as_str().unwrap_or("127.0.0.1");
        let port = credentials["port"].as_u64().unwrap_or(6379);
        let history = RedisChatHistory::connect(
            &format!("redis://{host}:{port}"),
            &self.session_id,
            Some(self.ttl),
        )
        .await?;
        Ok(ctx
            .memory(MemoryOptions::buffer_window(
                Arc::new(history),
                self.context_window as usize,
            ))
            .into())
    }
}
