use nodekit::prelude::*;

/// Typos and a key the macro sets itself.
#[db_tool(querry = "SELECT 1", output = tool, display_name = "A", display_name = "B")]
pub struct Keys;

/// Both forms.
#[db_tool(query = "SELECT 1", operation = select)]
pub struct Both;

/// Neither form.
#[db_tool(name = "neither")]
pub struct Neither;

/// An operation that does not exist, written as a string.
#[db_tool(operation = "selet")]
pub struct Quoted;

/// An operation that does not exist.
#[db_tool(operation = selet, credentials = ["postgres", "redis"])]
pub struct Unknown;

fn main() {}
