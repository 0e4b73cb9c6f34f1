//! A [`DbTool`] as an agent tool: one database connection per tool instance,
//! opened on the first call, and one checked request per call.

use serde_json::Value;

use crate::context::SupplyContext;
use crate::error::Result;
use crate::model::BoxFuture;
use crate::node::Supply;

use super::request::DbTool;

/// Builds the tool a [`DbTool`] node supplies.
pub(crate) fn supply_db_tool<T: DbTool>(
    params: Value,
    ctx: SupplyContext,
) -> BoxFuture<'static, Result<Supply>> {
    Box::pin(async move {
        let _ = (params, ctx);
        Err(crate::Error::Workflow(format!(
            "{} is not wired yet",
            T::NAME
        )))
    })
}
