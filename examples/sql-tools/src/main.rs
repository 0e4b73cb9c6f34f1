//! A SQL tool of one's own: a fixed query declared with `#[db_tool]`,
//! called on the sample shop database (`examples/data/shop.db`) as an
//! agent calls it, with the arguments a model fills.
//!
//! ```text
//! cargo run -p sql-tools                       # the top 2 customers by shipped orders
//! cargo run -p sql-tools -- '{"status": "open", "limit": 5}'
//! ```
//!
//! The query is checked when the crate compiles (its placeholders must
//! match the fields); the arguments are checked and bound when it runs,
//! and the tool reads in a read-only transaction with a time limit.

use std::process::ExitCode;

use nodekit::prelude::*;
use nodekit::serde_json::{Value, json};

/// The customers who spent the most on orders with a status.
#[db_tool(
    query = "SELECT c.name, SUM(o.quantity * p.price) AS spent FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id WHERE o.status = $1 GROUP BY c.name ORDER BY spent DESC LIMIT $2",
    name = "topCustomers",
    display_name = "Top Customers"
)]
pub struct TopCustomers {
    /// Which orders count.
    #[from_ai(
        description = "The orders' status: open, shipped or cancelled",
        default = "shipped"
    )]
    status: String,
    /// How many customers.
    #[from_ai(description = "How many customers to list", default = 2)]
    limit: i64,
    /// The workflow author's settings (tables, row limit, timeout).
    options: ToolOptions,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let arguments = match std::env::args()
        .nth(1)
        .map(|text| nodekit::serde_json::from_str(&text))
    {
        None => json!({}),
        Some(Ok(arguments)) => arguments,
        Some(Err(e)) => {
            eprintln!("sql-tools: the arguments are not JSON: {e}");
            return ExitCode::FAILURE;
        }
    };
    match answer(arguments).await {
        Ok(answer) => {
            println!("{answer:#}");
            // A refusal (bad arguments, a database error) is the tool's answer.
            if answer["success"] == true {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("sql-tools: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The tool's answer to the arguments a model filled.
async fn answer(arguments: Value) -> nodekit::Result<Value> {
    // The credential a workflow would hold: n8n's form of a SQLite file.
    let database = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/shop.db");
    let mut credentials = nodekit::node::Credentials::new();
    credentials.insert("sqlite".into(), json!({"databasePath": database}));
    // The node as a workflow would configure it: the model fills the rest.
    let tool = Catalog::global()
        .find("topCustomers")?
        .tools("top_customers", &json!({}), None, credentials)
        .await?
        .remove(0);
    tool.call(arguments).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tool_answers_with_the_rows_and_refuses_bad_arguments() {
        let top = answer(json!({})).await.unwrap();
        // Shipped: Grace Hopper 3 x 100, Ada Lovelace 129 + 2 x 24.
        assert_eq!(top["success"], true, "{top}");
        let names: Vec<_> = top["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["name"].clone())
            .collect();
        assert_eq!(names, ["Grace Hopper", "Ada Lovelace"], "{top}");

        let open = answer(json!({"status": "open", "limit": 1})).await.unwrap();
        assert_eq!(open["data"].as_array().unwrap().len(), 1, "{open}");

        // A limit that is no number never reaches the database.
        let refused = answer(json!({"limit": "all"})).await.unwrap();
        assert_eq!(refused["success"], false, "{refused}");
    }
}
