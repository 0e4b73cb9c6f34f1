//! A fixed SQL template: the tool's description, and its request bound from the fields in order.
use nodekit::prelude::*;
use nodekit::sql::{Bind, Request, TemplateRequest};
use serde_json::json;

const FIND: &str = "SELECT id, name FROM users WHERE email = $1 AND status = $2 AND age >= $3";

/// Finds users by e-mail address and status.
#[db_tool(
    name = "findUsers",
    display_name = "Find Users",
    query = "SELECT id, name FROM users WHERE email = $1 AND status = $2 AND age >= $3"
)]
#[derive(Debug)]
pub struct FindUsers {
    /// The user's e-mail address.
    #[from_ai(description = "The e-mail address to look up")]
    email: String,
    /// Not a parameter, and not bound.
    #[param(skip)]
    cache_hits: u32,
    /// Only users with this status.
    #[from_ai(default = "active")]
    status: String,
    /// Minimum age.
    #[param(default = 18)]
    min_age: Option<i64>,
    /// The workflow author's settings.
    options: ToolOptions,
}

/// Deletes expired sessions: nothing to bind, and a write.
#[db_tool(query = "DELETE FROM sessions WHERE expires_at < now()")]
pub struct PurgeSessions;

/// A data-modifying CTE is not read-only either.
#[db_tool(query = "WITH gone AS (DELETE FROM t WHERE id = $1 RETURNING *) SELECT * FROM gone")]
pub struct DeleteReturning {
    /// Which row.
    id: i32,
}

fn main() {
    let d = serde_json::to_value(FindUsers::description()).unwrap();
    assert_eq!(d["name"], "findUsers");
    assert_eq!(d["outputs"], json!(["ai_tool"]));
    assert_eq!(d["outputNames"], json!(["Tool"]));
    assert_eq!(d["inputs"], json!(["main"]));
    assert_eq!(
        d["credentials"],
        json!([{"name": "postgres", "required": false}, {"name": "sqlite", "required": false}])
    );
    let p = |name: &str| {
        d["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no property {name}"))
            .clone()
    };
    assert_eq!(
        p("email")["default"],
        "={{ $fromAI('email', 'The e-mail address to look up', 'string') }}"
    );
    assert_eq!(
        p("status")["default"],
        "={{ $fromAI('status', 'Only users with this status.', 'string', 'active') }}"
    );
    assert_eq!(p("minAge")["default"], 18);
    assert_eq!(p("options")["type"], "collection");
    let names: Vec<&str> = d["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["email", "status", "minAge", "options"]);

    let node = FindUsers::from_params(
        &json!({"email": "ada@example.test", "status": "active", "minAge": 21, "options": {"maxRows": 5}}),
        "Find Users",
    )
    .unwrap();
    assert_eq!(
        node.request(),
        Request::Template(TemplateRequest {
            sql: FIND,
            read_only: true,
            binds: vec![
                Bind::Text("ada@example.test".into()),
                Bind::Text("active".into()),
                Bind::Int(21)
            ],
        })
    );
    assert_eq!(node.request().operation(), "select");
    assert_eq!(node.options().max_rows, 5);
    assert_eq!(node.cache_hits, 0);

    let direct = FindUsers {
        email: "bob@example.test".into(),
        cache_hits: 7,
        status: "blocked".into(),
        min_age: None,
        options: ToolOptions::default(),
    };
    let Request::Template(t) = direct.request() else {
        panic!("not a template: {direct:?}")
    };
    assert_eq!(
        t.binds,
        [
            Bind::Text("bob@example.test".into()),
            Bind::Text("blocked".into()),
            Bind::Null
        ]
    );
    assert_eq!(direct.options(), ToolOptions::default());

    let purge = PurgeSessions.request();
    assert_eq!(
        purge,
        Request::Template(TemplateRequest {
            sql: "DELETE FROM sessions WHERE expires_at < now()",
            read_only: false,
            binds: vec![],
        })
    );
    assert_eq!(purge.operation(), "execute");
    // Without an `options` field, the settings are the defaults.
    assert_eq!(PurgeSessions.options(), ToolOptions::default());
    let Request::Template(t) = (DeleteReturning { id: 4 }).request() else {
        unreachable!()
    };
    assert!(!t.read_only);
    assert_eq!(t.binds, [Bind::Int(4)]);

    // Registered with the SQL tool runtime.
    let entry = Catalog::global().find("findUsers").unwrap();
    assert!(entry.runtime.supply.is_some());
    assert!(entry.runtime.execute.is_none());
}
