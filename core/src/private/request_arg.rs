//! How a `#[db_tool(operation = ...)]` field fills its SQL request's argument.

use serde_json::Value;

/// A field type that can fill an argument of a `#[db_tool(operation = ...)]`
/// request (`T` is the request field's type).
#[diagnostic::on_unimplemented(
    message = "a `{Self}` field cannot fill a `{T}` argument of a SQL request",
    label = "this field fills an argument of the tool's request",
    note = "tableName, columns, whereConditions, orderBy, conflictColumns, action and query take `String` or `Option<String>`; limit, offset and timeLimit take an integer or an `Option` of one; rows and values take `serde_json::Value` or `Option<serde_json::Value>`"
)]
pub trait RequestArg<T> {
    /// The argument's value.
    fn request_arg(&self) -> T;
}

impl RequestArg<String> for String {
    fn request_arg(&self) -> String {
        self.clone()
    }
}

/// An absent text argument is empty: all columns, no filter, no order.
impl RequestArg<String> for Option<String> {
    fn request_arg(&self) -> String {
        self.clone().unwrap_or_default()
    }
}

impl RequestArg<Value> for Value {
    fn request_arg(&self) -> Value {
        self.clone()
    }
}

impl RequestArg<Value> for Option<Value> {
    fn request_arg(&self) -> Value {
        self.clone().unwrap_or(Value::Null)
    }
}

macro_rules! request_arg_int {
    ($($t:ty),*) => {$(
        impl RequestArg<Option<i64>> for $t {
            fn request_arg(&self) -> Option<i64> {
                // The runtime caps limits anyway; saturate rather than wrap.
                Some(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
        impl RequestArg<Option<i64>> for Option<$t> {
            fn request_arg(&self) -> Option<i64> {
                self.as_ref().and_then(RequestArg::<Option<i64>>::request_arg)
            }
        }
    )*};
}
request_arg_int!(i8, i16, i32, i64, u8, u16, u32, u64, usize);
