//! The eight operation forms: fields fill the request's arguments by their
//! n8n parameter names.
use nodekit::prelude::*;
use nodekit::sql::{
    DeleteRequest, DescribeRequest, ExecuteRequest, InsertRequest, Request, SelectRequest,
    TransactionRequest, UpdateRequest, UpsertRequest,
};
use serde_json::{Value, json};

/// Reads rows of one table.
#[db_tool(name = "selectRows", operation = select)]
pub struct SelectRows {
    /// The table to read.
    #[from_ai]
    table_name: String,
    /// Comma-separated columns.
    #[from_ai]
    columns: Option<String>,
    /// Filter conditions, under a field name of the author's choosing.
    #[param(name = "whereConditions")]
    #[from_ai(default = "")]
    filter: String,
    /// Most rows.
    #[from_ai]
    limit: Option<u32>,
    /// Rows to skip.
    #[param(default = 0)]
    offset: i64,
    /// Not an argument.
    #[param(skip)]
    calls: u8,
    /// Settings.
    #[param(collection)]
    options: ToolOptions,
}

/// Adds rows.
#[db_tool(operation = insert)]
pub struct InsertRows {
    /// The table.
    table_name: String,
    /// One row object or an array of them.
    #[from_ai]
    rows: Value,
}

/// Changes rows.
#[db_tool(operation = update)]
pub struct UpdateRows {
    /// The table.
    table_name: String,
    /// Column → new value.
    #[from_ai]
    values: Option<Value>,
    /// Which rows.
    #[from_ai]
    where_conditions: String,
}

/// Removes rows.
#[db_tool(operation = delete, version = [1, 2], group = ["output"])]
pub struct DeleteRows {
    /// The table.
    table_name: String,
    /// Which rows.
    #[from_ai]
    where_conditions: String,
    /// Settings.
    options: ToolOptions,
}

/// The table, shared by several tools.
#[derive(NodeParams)]
pub struct TableGroup {
    /// The table.
    #[from_ai]
    table_name: String,
}

impl nodekit::sql::RequestArgs for TableGroup {
    fn fill(&self, request: &mut Request) {
        request.set_table(&self.table_name);
    }
}

/// Removes rows; the table comes from a flattened group.
#[db_tool(operation = delete)]
pub struct DeleteGrouped {
    /// The table group.
    #[param(flatten)]
    table: TableGroup,
    /// Which rows.
    #[from_ai]
    where_conditions: String,
}

/// Runs one statement.
#[db_tool(operation = execute)]
pub struct ExecuteSql {
    /// The statement.
    #[from_ai]
    query: String,
}

/// Lists the tables, or describes one; the table is optional.
#[db_tool(operation = describe)]
pub struct Describe {
    /// The table; none lists them.
    #[from_ai]
    table_name: Option<String>,
}

/// Describes tables; no argument at all: the list.
#[db_tool(operation = describe)]
pub struct ListTables {
    /// Settings.
    options: ToolOptions,
}

/// Inserts or updates rows.
#[db_tool(operation = upsert)]
pub struct Upsert {
    /// The table.
    table_name: String,
    /// The key.
    #[from_ai]
    conflict_columns: String,
    /// The rows.
    #[from_ai]
    rows: Value,
}

/// Begins, commits or rolls back the run's transaction.
#[db_tool(operation = transaction)]
pub struct Transaction {
    /// begin, commit or rollback.
    #[from_ai]
    action: String,
    /// Seconds it may stay open.
    #[param(default = 30)]
    time_limit: u32,
}

fn main() {
    let transaction = Transaction {
        action: "begin".into(),
        time_limit: 30,
    };
    assert_eq!(
        transaction.request(),
        Request::Transaction(TransactionRequest {
            action: "begin".into(),
            time_limit: Some(30),
        })
    );
    assert_eq!(transaction.request().operation(), "transaction");
    let describe = Describe {
        table_name: Some("users".into()),
    };
    assert_eq!(
        describe.request(),
        Request::Describe(DescribeRequest {
            table: "users".into()
        })
    );
    assert_eq!(describe.request().operation(), "describe");
    let list = ListTables {
        options: ToolOptions::default(),
    };
    assert_eq!(
        list.request(),
        Request::Describe(DescribeRequest::default())
    );
    let upsert = Upsert {
        table_name: "users".into(),
        conflict_columns: "email".into(),
        rows: json!({"email": "a@example.com"}),
    };
    assert_eq!(
        upsert.request(),
        Request::Upsert(UpsertRequest {
            table: "users".into(),
            rows: json!({"email": "a@example.com"}),
            conflict_columns: "email".into(),
        })
    );
    assert_eq!(upsert.request().operation(), "upsert");

    let select = SelectRows::from_params(
        &json!({"tableName": "users", "whereConditions": "", "limit": 10, "options": {"allowedTables": "users"}}),
        "Select",
    )
    .unwrap();
    assert_eq!(
        select.request(),
        Request::Select(SelectRequest {
            table: "users".into(),
            columns: String::new(),
            filter: String::new(),
            order_by: String::new(),
            limit: Some(10),
            offset: Some(0),
        })
    );
    assert_eq!(select.options().allowed_tables, "users");
    assert_eq!(select.calls, 0);
    let d = serde_json::to_value(SelectRows::description()).unwrap();
    assert_eq!(d["inputs"], json!(["main"]));
    assert_eq!(d["outputs"], json!(["ai_tool"]));

    let insert = InsertRows {
        table_name: "t".into(),
        rows: json!([{"a": 1}]),
    };
    assert_eq!(
        insert.request(),
        Request::Insert(InsertRequest {
            table: "t".into(),
            rows: json!([{"a": 1}])
        })
    );
    let update = UpdateRows {
        table_name: "t".into(),
        values: None,
        where_conditions: "id = 1".into(),
    };
    assert_eq!(
        update.request(),
        Request::Update(UpdateRequest {
            table: "t".into(),
            values: Value::Null,
            filter: "id = 1".into()
        })
    );
    let delete = DeleteRows {
        table_name: "t".into(),
        where_conditions: "id = 2".into(),
        options: ToolOptions::default(),
    };
    assert_eq!(
        delete.request(),
        Request::Delete(DeleteRequest {
            table: "t".into(),
            filter: "id = 2".into()
        })
    );
    assert_eq!(
        serde_json::to_value(DeleteRows::description()).unwrap()["group"],
        json!(["output"])
    );
    let execute = ExecuteSql {
        query: "SELECT 1".into(),
    };
    assert_eq!(
        execute.request(),
        Request::Execute(ExecuteRequest {
            sql: "SELECT 1".into()
        })
    );
    assert_eq!(execute.request().operation(), "execute");

    let grouped = DeleteGrouped::from_params(
        &json!({"tableName": "t", "whereConditions": "id = 3"}),
        "Delete",
    )
    .unwrap();
    assert_eq!(
        grouped.request(),
        Request::Delete(DeleteRequest {
            table: "t".into(),
            filter: "id = 3".into()
        })
    );
    let names: Vec<String> = DeleteGrouped::properties()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["tableName", "whereConditions"]);
}
