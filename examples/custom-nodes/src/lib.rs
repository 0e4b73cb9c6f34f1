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

impl ToolNode for WeatherForecastTool {
    async fn call(self, _ctx: &SupplyContext) -> nodekit::Result<nodekit::serde_json::Value> {
        let days: Vec<_> = (1..=self.days)
            .map(|day| forecast(&self.city, day, self.units))
            .collect();
        Ok(nodekit::serde_json::json!({
            "city": self.city,
            "units": self.units,
            "days": days,
            "source": "a deterministic generator, not a weather service",
        }))
    }
}

/// A made-up but repeatable forecast: the same city and day always get the
/// same weather, so the example runs offline and its output can be checked.
fn forecast(city: &str, day: u32, units: Units) -> nodekit::serde_json::Value {
    // FNV-1a over the city (any case) and the day.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in city.to_lowercase().bytes().chain(day.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let summaries = [
        "sunny",
        "partly cloudy",
        "cloudy",
        "light rain",
        "showers",
        "windy",
    ];
    let high_c = 5 + (h % 26) as i64;
    let low_c = high_c - 3 - ((h >> 8) % 6) as i64;
    let temp = |c: i64| match units {
        Units::Metric => c,
        Units::Imperial => (c * 9).div_euclid(5) + 32,
    };
    nodekit::serde_json::json!({
        "day": day,
        "summary": summaries[((h >> 16) % summaries.len() as u64) as usize],
        "high": temp(high_c),
        "low": temp(low_c),
    })
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
            .create_memory(MemoryOptions::buffer_window(
                Arc::new(history),
                self.context_window as usize,
            ))
            .into())
    }
}

/// Keeps this crate's node registrations in a binary that calls it.
pub fn link() {}
