//! Resolves `={{ $fromAI(...) }}` parameters the way n8n's expression engine
//! would, without evaluating any JavaScript: only `{{ }}` blocks that are a
//! single `$fromAI` call with literal arguments are accepted.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};

use super::collect::{check_depth, collect, push_index, push_key};
use super::error::FromAiError;
use super::js::{exceeds_depth, is_js_space, js_entries, js_join_string, js_trim, js_trim_start};
use super::parse::parse_arguments;
use super::schema::{apply_bounds, arguments_schema};
use super::validate::{ArgumentsValidator, MAX_ARGUMENT_DEPTH};
use super::{FROM_AI_AUTO_GENERATED_MARKER, FromAiCall, MAX_DEPTH};
use crate::description::ArgumentBounds;

/// Keys n8n's `$fromAI` refuses at run time (`isSafeObjectProperty`), because in
/// JavaScript they reach object internals instead of the argument.
const RESERVED_KEYS: &[&str] = &[
    "__proto__",
    "prototype",
    "constructor",
    "getPrototypeOf",
    "setPrototypeOf",
    "getOwnPropertyDescriptor",
    "getOwnPropertyDescriptors",
    "defineProperty",
    "defineProperties",
    "mainModule",
    "binding",
    "_linkedBinding",
    "_load",
    "prepareStackTrace",
    "__lookupGetter__",
    "__lookupSetter__",
    "__defineGetter__",
    "__defineSetter__",
    "caller",
    "callee",
    "arguments",
    "getBuiltinModule",
    "dlopen",
    "execve",
    "loadEnvFile",
];

/// The spellings n8n's data proxy defines; others parse but fail at run time.
const CALL_NAMES: &[&str] = &["fromAI", "fromai", "fromAi"];

/// The `$fromAI` calls of one set of parameters, with their argument schema
/// compiled once, for substituting many argument sets (one per tool call).
#[derive(Debug)]
pub struct Substitution {
    params: Value,
    plan: Plan,
    calls: Vec<FromAiCall>,
    schema: Value,
    validator: ArgumentsValidator,
}

/// The parameters with every expression parsed, so a tool call only looks
/// arguments up: parsing happens once per prepared tool, not per call.
#[derive(Debug)]
enum Plan {
    /// A value without expressions, copied as it is.
    Const(Value),
    /// `={{ $fromAI('key') }}`: the argument's value, typed.
    Whole(String),
    /// A template: text and arguments joined as JavaScript would.
    Text(Vec<Piece>),
    Array(Vec<Plan>),
    /// Entries in the caller's key order.
    Object(Vec<(String, Plan)>),
}

#[derive(Debug)]
enum Piece {
    Text(String),
    Argument(String),
}

impl Substitution {
    /// Collects the calls in `params` and compiles their schema.
    pub fn new(params: Value) -> Result<Self, FromAiError> {
        Self::with_bounds(params, &[])
    }

    /// Like [`Substitution::new`], with the numeric arguments that `bounds`
    /// names narrowed to their fields' integer type and range.
    pub fn with_bounds(params: Value, bounds: &[&ArgumentBounds]) -> Result<Self, FromAiError> {
        let calls = collect(&params)?;
        let mut schema = arguments_schema(&calls);
        apply_bounds(&mut schema, bounds);
        let validator = ArgumentsValidator::new(&schema)?;
        let plan = compile(&params, &mut String::new(), 0)?;
        Ok(Substitution {
            params,
            plan,
            calls,
            schema,
            validator,
        })
    }

    /// The parameters the calls were collected from.
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// The calls, merged by key, in order of first appearance.
    pub fn calls(&self) -> &[FromAiCall] {
        &self.calls
    }

    /// The JSON Schema of the arguments.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Validates `args` (an object) and returns the parameters with every
    /// `$fromAI` expression replaced by its argument.
    pub fn apply(&self, args: &Value) -> Result<Value, FromAiError> {
        let empty = Map::new();
        let given = args.as_object().unwrap_or(&empty);
        // Defaults are cloned into the map below, so refuse absurdly deep values first.
        if let Some((key, _)) = given
            .iter()
            .find(|(_, v)| exceeds_depth(v, MAX_ARGUMENT_DEPTH - 1))
        {
            return Err(self.validator.too_deep(&format!("/{key}")).into());
        }
        self.validator.validate(args)?;
        // LangChain parses the arguments with n8n's zod schema before the node runs,
        // which fills in defaults for omitted keys.
        let needs_defaults = self
            .calls
            .iter()
            .any(|c| c.default.is_some() && !given.contains_key(&c.key));
        let values = if needs_defaults {
            let mut values = given.clone();
            for call in &self.calls {
                if let Some(default) = &call.default {
                    values
                        .entry(call.key.clone())
                        .or_insert_with(|| default.clone());
                }
            }
            Cow::Owned(values)
        } else {
            Cow::Borrowed(given)
        };
        render(&self.plan, &values)
    }
}

pub(crate) fn substitute(params: &Value, args: &Map<String, Value>) -> Result<Value, FromAiError> {
    Substitution::new(params.clone())?.apply(&Value::Object(args.clone()))
}

fn compile(value: &Value, path: &mut String, depth: usize) -> Result<Plan, FromAiError> {
    match value {
        Value::String(s) => match s.strip_prefix('=') {
            Some(expression) => compile_expression(expression, path, value),
            // n8n treats only strings starting with `=` as expressions.
            None => Ok(Plan::Const(value.clone())),
        },
        Value::Array(items) => {
            check_depth(path, depth)?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                push_index(path, i);
                out.push(compile(item, path, depth + 1)?);
                path.truncate(len);
            }
            Ok(constant_or(value, out, Plan::Array))
        }
        Value::Object(map) => {
            check_depth(path, depth)?;
            // Compile in JS order (so the first error reported matches the
            // collection order) but keep the caller's key order in the output.
            let mut by_key: HashMap<&str, Plan> = HashMap::with_capacity(map.len());
            for (key, item) in js_entries(map) {
                let len = path.len();
                push_key(path, key);
                by_key.insert(key, compile(item, path, depth + 1)?);
                path.truncate(len);
            }
            let out: Vec<(String, Plan)> = map
                .keys()
                .filter_map(|key| Some((key.clone(), by_key.remove(key.as_str())?)))
                .collect();
            let constant = out.iter().all(|(_, p)| matches!(p, Plan::Const(_)));
            Ok(if constant {
                Plan::Const(value.clone())
            } else {
                Plan::Object(out)
            })
        }
        _ => Ok(Plan::Const(value.clone())),
    }
}

/// Whether the text has a `$fromAI` call, spelled in any case as n8n's parser allows.
fn mentions_from_ai(text: &str) -> bool {
    text.as_bytes()
        .windows(7)
        .any(|w| w.eq_ignore_ascii_case(b"$fromai"))
}

/// A whole constant subtree stays one `Const`, copied in one go.
fn constant_or(value: &Value, plans: Vec<Plan>, wrap: fn(Vec<Plan>) -> Plan) -> Plan {
    if plans.iter().all(|p| matches!(p, Plan::Const(_))) {
        Plan::Const(value.clone())
    } else {
        wrap(plans)
    }
}

fn render(plan: &Plan, values: &Map<String, Value>) -> Result<Value, FromAiError> {
    Ok(match plan {
        Plan::Const(v) => v.clone(),
        Plan::Whole(key) => values.get(key).cloned().unwrap_or(Value::Null),
        Plan::Text(pieces) => {
            let mut out = String::new();
            for piece in pieces {
                match piece {
                    Piece::Text(t) => out.push_str(t),
                    Piece::Argument(key) => {
                        let value = values.get(key).unwrap_or(&Value::Null);
                        let text = js_join_string(value, MAX_DEPTH).ok_or_else(|| {
                            FromAiError::TooDeep {
                                path: format!("argument `{key}`"),
                                limit: MAX_DEPTH,
                            }
                        })?;
                        out.push_str(&text);
                    }
                }
            }
            Value::String(out)
        }
        Plan::Array(items) => Value::Array(
            items
                .iter()
                .map(|p| render(p, values))
                .collect::<Result<_, _>>()?,
        ),
        Plan::Object(entries) => {
            let mut out = Map::with_capacity(entries.len());
            for (key, p) in entries {
                out.insert(key.clone(), render(p, values)?);
            }
            Value::Object(out)
        }
    })
}

/// One piece of a template, as split by n8n's expression engine (tournament).
#[derive(Debug, PartialEq)]
enum Chunk<'a> {
    Text(Cow<'a, str>),
    Code(Cow<'a, str>),
}

fn compile_expression(expression: &str, path: &str, original: &Value) -> Result<Plan, FromAiError> {
    let chunks = split_expression(expression);
    // Code without any `$fromAI` (`{{ $json.x }}`, ...) is the workflow
    // engine's to resolve: such an expression passes through as written.
    let mut code = chunks.iter().filter_map(|c| match c {
        Chunk::Code(code) => Some(code),
        Chunk::Text(_) => None,
    });
    if code.clone().next().is_some() && !code.any(|c| mentions_from_ai(c)) {
        return Ok(Plan::Const(original.clone()));
    }
    if chunks.is_empty() {
        // A template ending in an escaped `\{{` yields no chunks; tournament then
        // throws a TypeError, which n8n's evaluator turns into `null`.
        return Ok(Plan::Const(Value::Null));
    }
    // Tournament returns the raw value only for exactly `{{ code }}`; anything
    // else, even trailing whitespace, is joined into a string.
    if let [Chunk::Text(first), Chunk::Code(code)] = chunks.as_slice()
        && first.is_empty()
    {
        return Ok(Plan::Whole(from_ai_key(code, path)?));
    }
    let mut pieces = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        pieces.push(match chunk {
            Chunk::Text(t) => Piece::Text(t.into_owned()),
            Chunk::Code(code) => Piece::Argument(from_ai_key(&code, path)?),
        });
    }
    Ok(Plan::Text(pieces))
}

/// Tournament's `splitExpression`: `{{`/`}}` preceded by an odd number of
/// backslashes are literal; an unterminated `{{` still opens a code chunk.
fn split_expression(expression: &str) -> Vec<Chunk<'_>> {
    if expression.is_empty() {
        return vec![Chunk::Text(Cow::Borrowed(""))];
    }
    let mut chunks = Vec::new();
    let mut searching_open = true;
    let mut buffer = String::new();
    let mut index = 0;
    while index < expression.len() {
        let rest = &expression[index..];
        let delimiter = if searching_open { "{{" } else { "}}" };
        let Some(found) = rest.find(delimiter) else {
            buffer.push_str(rest);
            let buffer = std::mem::take(&mut buffer);
            chunks.push(if searching_open {
                Chunk::Text(Cow::Owned(buffer))
            } else {
                Chunk::Code(Cow::Owned(escape_code(&buffer)))
            });
            break;
        };
        let before = &rest[..found];
        let backslashes = before.bytes().rev().take_while(|&b| b == b'\\').count();
        if backslashes % 2 == 1 {
            buffer.push_str(&rest[..found + 2]);
        } else {
            buffer.push_str(before);
            let buffer = std::mem::take(&mut buffer);
            if searching_open {
                chunks.push(Chunk::Text(Cow::Owned(buffer.replace("\\\\", "\\"))));
            } else {
                chunks.push(Chunk::Code(Cow::Owned(escape_code(&buffer))));
            }
            searching_open = !searching_open;
        }
        index += found + 2;
    }
    chunks
}

/// Tournament's `escapeCode`: JS `replace` with a string pattern, so only the first.
fn escape_code(code: &str) -> String {
    code.replacen("\\}}", "}}", 1)
}

/// The key of a code chunk that is exactly one `$fromAI(...)` call with literal
/// arguments (n8n's `isFromAIOnlyExpression` rules), or why it is not.
fn from_ai_key(code: &str, path: &str) -> Result<String, FromAiError> {
    let unsupported = |reason: &str| FromAiError::UnsupportedExpression {
        path: path.to_owned(),
        expression: code.to_owned(),
        reason: reason.to_owned(),
    };
    let mut s = js_trim(code);
    if let Some(rest) = s.strip_prefix(FROM_AI_AUTO_GENERATED_MARKER) {
        s = js_trim_start(rest);
    }
    let Some(after_dollar) = s.strip_prefix('$') else {
        return Err(unsupported("it is not a $fromAI(...) call"));
    };
    let name_len = "fromAI".len();
    let name = after_dollar.get(..name_len).unwrap_or("");
    if !name.eq_ignore_ascii_case("fromai") {
        return Err(unsupported("it is not a $fromAI(...) call"));
    }
    if !CALL_NAMES.contains(&name) {
        return Err(unsupported(
            "n8n only defines $fromAI, $fromai and $fromAi; fix the capitalisation",
        ));
    }
    let Some(after_paren) = js_trim_start(&after_dollar[name_len..]).strip_prefix('(') else {
        return Err(unsupported("`$fromAI` must be called with parentheses"));
    };
    let (args, remainder) = literal_call_arguments(after_paren).map_err(unsupported)?;
    if !js_trim(remainder).is_empty() {
        return Err(unsupported(
            "nothing may follow the $fromAI(...) call inside {{ }}",
        ));
    }
    let call = parse_arguments(args).map_err(|ty| FromAiError::InvalidType {
        path: path.to_owned(),
        args: args.to_owned(),
        ty,
    })?;
    // The key was validated when collecting; only n8n's run-time check is left.
    if RESERVED_KEYS.contains(&call.key.as_str()) {
        return Err(FromAiError::ReservedKey {
            path: path.to_owned(),
            key: call.key,
        });
    }
    Ok(call.key)
}

/// Splits `args...) rest` at the closing parenthesis, refusing anything but
/// literals outside quotes: no nested calls, operators, variables, template
/// interpolation or tagged templates.
fn literal_call_arguments(text: &str) -> Result<(&str, &str), &'static str> {
    let bytes = text.as_bytes();
    let mut quote: Option<u8> = None;
    let mut last_outside: u8 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == b'\\' && i + 1 < bytes.len() {
                i += 2;
                continue;
            }
            if q == b'`' && c == b'$' && bytes.get(i + 1) == Some(&b'{') {
                return Err("template interpolation `${...}` is not allowed in $fromAI arguments");
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or('\0');
        match c {
            b'"' | b'\'' | b'`' => {
                if c == b'`' && (last_outside.is_ascii_alphanumeric() || last_outside == b'_') {
                    return Err("tagged template literals are not allowed in $fromAI arguments");
                }
                quote = Some(c);
            }
            b')' => return Ok((&text[..i], &text[i + 1..])),
            _ if c.is_ascii_alphanumeric() || matches!(c, b'.' | b',' | b'-') => {}
            _ if is_js_space(ch) => {}
            _ => {
                return Err(
                    "$fromAI arguments must be literals (quoted strings, numbers, true/false); found an operator, variable or nested call",
                );
            }
        }
        if !is_js_space(ch) {
            last_outside = c;
        }
        i += ch.len_utf8();
    }
    Err("the $fromAI( call is not closed")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Chunk<'_> {
        Chunk::Text(Cow::Borrowed(s))
    }
    fn code(s: &str) -> Chunk<'_> {
        Chunk::Code(Cow::Borrowed(s))
    }

    #[test]
    fn splits_like_tournament() {
        assert_eq!(split_expression(""), vec![text("")]);
        assert_eq!(split_expression("abc"), vec![text("abc")]);
        assert_eq!(split_expression("{{ a }}"), vec![text(""), code(" a ")]);
        assert_eq!(
            split_expression("x {{ a }} y"),
            vec![text("x "), code(" a "), text(" y")]
        );
        // Escaped open bracket: the text is kept verbatim, backslash included.
        assert_eq!(split_expression("a \\{{ b }}"), vec![text("a \\{{ b }}")]);
        // An even run of backslashes is not an escape and is halved.
        assert_eq!(
            split_expression("a \\\\{{ b }}"),
            vec![text("a \\"), code(" b ")]
        );
        // Unterminated `{{` still yields code.
        assert_eq!(split_expression("{{ a "), vec![text(""), code(" a ")]);
    }

    #[test]
    fn literal_arguments_only() {
        assert_eq!(
            literal_call_arguments("'a', 'b', 'number', -5.5) "),
            Ok(("'a', 'b', 'number', -5.5", " "))
        );
        assert!(literal_call_arguments("'a' + x)").is_err());
        assert!(literal_call_arguments("evil())").is_err());
        assert!(literal_call_arguments("`${x}`)").is_err());
        assert!(literal_call_arguments("tag`x`)").is_err());
        assert!(literal_call_arguments("$env)").is_err());
        assert!(literal_call_arguments("'a'").is_err());
        // Escaped quote inside a string does not end it.
        assert_eq!(
            literal_call_arguments("'a\\')', 'b')"),
            Ok(("'a\\')', 'b'", ""))
        );
    }
}
