//! `#[db_tool(...)]`: a SQL tool node. Parses its own keys, checks the fixed
//! template or the operation's fields, then expands to the struct under
//! `#[::nodekit::__private::ai_node(<the author's keys>, output = tool, main_input,
//! optional_credentials = ["postgres", "sqlite"])]` (which does parameters,
//! description and registration, and reports its own errors) next to
//! `impl ::nodekit::__private::sql::DbTool`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Fields, Ident, Lit, LitStr, Token};

use crate::attr::{self, Keys, ParamAttrs};
use crate::ctxt::Ctxt;
use crate::sql_template::{self, and_list};
use crate::symbol::{
    DB_CREDENTIALS, DB_TOOL_FIXED_KEYS, DB_TOOL_KEYS, OPERATION_ARGS, OPERATIONS, OperationArg,
};
use nodekit_rules::closest;

/// The field that holds the workflow author's settings (`nodekit::sql::ToolOptions`).
const OPTIONS_FIELD: &str = "options";

/// Parsed `#[db_tool(...)]`.
#[derive(Default)]
struct Args {
    /// The `#[ai_node]` keys, re-emitted as written (so their spans stay).
    node_keys: Vec<TokenStream>,
    query: Option<LitStr>,
    /// `None` when not given; `Some(None)` when given but invalid (already reported).
    operation: Option<Option<Ident>>,
}

/// The request arguments of `operation`: `(request field, n8n parameter name, required)`.
fn operation_args(operation: &str) -> &'static [OperationArg] {
    OPERATION_ARGS
        .iter()
        .find(|(op, _)| *op == operation)
        .map_or(&[], |(_, args)| args)
}

/// A field of the annotated struct, as `#[db_tool]` sees it.
struct Field<'a> {
    ident: &'a Ident,
    ty: &'a syn::Type,
    /// `#[param(skip)]` or `#[param(flatten)]`: not one of the request's values.
    skip: bool,
    /// `#[param(flatten)]`: a group that fills arguments itself (`nodekit::sql::RequestArgs`).
    group: bool,
    /// Its n8n parameter name: `#[param(name)]`, else the field name in lowerCamelCase.
    param: String,
}

/// `#[db_tool(...)]` on a struct.
pub fn db_tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item: syn::ItemStruct = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let error = syn::Error::new(e.span(), "#[db_tool] goes on a struct with named fields")
                .to_compile_error();
            return quote!(#item #error);
        }
    };
    let cx = Ctxt::default();
    let args = parse_args(&cx, args);
    let fields = fields(&item.fields);
    let form = match (&args.query, &args.operation) {
        (Some(query), None) => check_template(&cx, query, &fields),
        (None, Some(Some(operation))) => check_operation(&cx, operation, &fields),
        (None, Some(None)) => None,
        (Some(query), Some(operation)) => {
            let span = operation.as_ref().map_or(query.span(), Ident::span);
            cx.syn_error(syn::Error::new(
                span,
                "a db_tool has either `query = \"...\"` (a fixed SQL template) or `operation = ...`, not both",
            ));
            None
        }
        (None, None) => {
            cx.error_spanned_by(
                &item.ident,
                format!(
                    "a db_tool needs `query = \"...\"` (a fixed SQL template whose placeholders `$1`, `$2`, ... are bound from the fields) or `operation = {}`",
                    OPERATIONS.join("|")
                ),
            );
            None
        }
    };
    let has_options = fields.iter().any(|f| f.ident == OPTIONS_FIELD);
    let errors = cx.check().err().map(|e| e.to_compile_error());
    let body = match form {
        Some(form) if errors.is_none() => {
            let request = request(&form, &fields);
            let options = has_options.then(|| options_fn(&item.fields));
            // The name responses use, as `Request::operation` gives it.
            let operation = match &form {
                Form::Template {
                    read_only: true, ..
                } => "select",
                Form::Template { .. } => "execute",
                Form::Operation { op } => op.as_str(),
            };
            quote! {
                const OPERATION: &'static str = #operation;

                fn request(&self) -> ::nodekit::__private::sql::Request {
                    #request
                }
                #options
            }
        }
        // Stands in next to the errors, so that uses of the trait add none.
        _ => quote! {
            fn request(&self) -> ::nodekit::__private::sql::Request {
                ::core::unimplemented!()
            }
        },
    };
    imply_options_collection(&mut item.fields);
    let ident = &item.ident;
    // A generic struct is refused by #[ai_node]; an impl would only add errors.
    let db_tool_impl = item.generics.params.is_empty().then(|| {
        quote! {
            const _: () = {
                #[automatically_derived]
                impl ::nodekit::__private::sql::DbTool for #ident {
                    #body
                }
                #[automatically_derived]
                impl ::nodekit::__private::OwnSupply for #ident {
                    fn supply_fn() -> ::nodekit::__private::SupplyFn {
                        ::nodekit::__private::sql::supply_db_tool::<#ident>
                    }
                }
            };
        }
    });
    let node_keys = &args.node_keys;
    let credentials = DB_CREDENTIALS;
    quote! {
        #[::nodekit::__private::ai_node(#(#node_keys,)* output = tool, main_input, optional_credentials = [#(#credentials),*])]
        #item
        #errors
        #db_tool_impl
    }
}

fn parse_args(cx: &Ctxt, args: TokenStream) -> Args {
    let mut out = Args::default();
    let mut keys = Keys::new(cx, "db_tool", DB_TOOL_KEYS);
    let parser = syn::meta::parser(|meta| {
        if let Some((key, why)) = DB_TOOL_FIXED_KEYS
            .iter()
            .find(|(key, _)| meta.path.is_ident(key))
        {
            cx.error_spanned_by(
                &meta.path,
                format!("`{key}` cannot be set on `#[db_tool]`: {why}"),
            );
            return attr::skip_value(&meta);
        }
        let Some(key) = keys.key(&meta) else {
            return attr::skip_value(&meta);
        };
        match key.as_str() {
            "query" => out.query = Some(attr::lit_str(&meta)?),
            "operation" => out.operation = Some(operation(cx, &meta.value()?.parse()?)),
            _ => {
                let path = &meta.path;
                if meta.input.peek(Token![=]) {
                    let mut value: Expr = meta.value()?.parse()?;
                    if key == "credentials" {
                        credentials(cx, &mut value);
                    }
                    out.node_keys.push(quote!(#path = #value));
                } else {
                    out.node_keys.push(quote!(#path));
                }
            }
        }
        Ok(())
    });
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
    out
}

/// `select`, `insert`, ...: one of [`OPERATIONS`], written as a bare word.
fn operation(cx: &Ctxt, value: &Expr) -> Option<Ident> {
    let word = match value {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
        _ => None,
    };
    let expected = format!("expected one of: {}", OPERATIONS.join(", "));
    let Some(word) = word else {
        let hint = match value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => format!("; write it without quotes: `operation = {}`", s.value()),
            _ => String::new(),
        };
        cx.error_spanned_by(
            value,
            format!("`operation` is a bare word, {expected}{hint}"),
        );
        return None;
    };
    let name = word.to_string();
    if !OPERATIONS.contains(&name.as_str()) {
        let hint = closest(&name, OPERATIONS)
            .map_or_else(String::new, |b| format!("did you mean `{b}`? "));
        cx.error_spanned_by(
            &word,
            format!("unknown operation `{name}`; {hint}{expected}"),
        );
        return None;
    }
    Some(word)
}

/// The PostgreSQL and SQLite credentials are added, optional; listing them
/// as required would say the tool needs both. They are reported, then
/// dropped so that `#[ai_node]` does not report them again.
fn credentials(cx: &Ctxt, value: &mut Expr) {
    let Expr::Array(list) = value else { return };
    let elems = std::mem::take(&mut list.elems);
    for elem in elems {
        if let Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) = &elem
            && DB_CREDENTIALS.contains(&s.value().as_str())
        {
            cx.error_spanned_by(
                s,
                format!(
                    "`#[db_tool]` adds the `postgres` and `sqlite` credentials itself, both optional (the tool uses whichever the workflow sets); remove \"{}\" from `credentials`",
                    s.value()
                ),
            );
        } else {
            list.elems.push(elem);
        }
    }
}

fn fields(fields: &Fields) -> Vec<Field<'_>> {
    let Fields::Named(named) = fields else {
        // Tuple structs are refused by #[ai_node]; a unit struct binds nothing.
        return Vec::new();
    };
    named
        .named
        .iter()
        .map(|f| {
            let ident = f.ident.as_ref().expect("named fields have identifiers");
            let attrs = param_attrs(f);
            Field {
                ident,
                ty: &f.ty,
                skip: attrs.skip.is_some() || attrs.flatten.is_some(),
                group: attrs.flatten.is_some(),
                param: attrs.name.as_ref().map_or_else(
                    || crate::case::lower_camel(&ident.to_string()),
                    syn::LitStr::value,
                ),
            }
        })
        .collect()
}

/// The field's `#[param]` keys. Mistakes in them are #[ai_node]'s to report.
fn param_attrs(f: &syn::Field) -> ParamAttrs {
    let scratch = Ctxt::default();
    let out = attr::param_attrs(&scratch, &f.attrs);
    let _ = scratch.check();
    out
}

/// The fields that carry a call's values, in order: all but
/// `#[param(skip)]` ones and `options`.
fn arg_fields<'f, 'a>(fields: &'f [Field<'a>]) -> Vec<&'f Field<'a>> {
    fields
        .iter()
        .filter(|f| !f.skip && f.ident != OPTIONS_FIELD)
        .collect()
}

/// A checked `query` or `operation`: what `request()` is generated from.
enum Form<'a> {
    Template { query: &'a LitStr, read_only: bool },
    Operation { op: String },
}

/// `query = "..."`: the template's own checks, then its placeholders against the fields.
fn check_template<'a>(cx: &Ctxt, query: &'a LitStr, fields: &[Field]) -> Option<Form<'a>> {
    let checked = match sql_template::check(&query.value()) {
        Ok(t) => t,
        Err(errors) => {
            for e in errors {
                cx.error_spanned_by(query, e);
            }
            return None;
        }
    };
    let bound = arg_fields(fields);
    if checked.placeholders != bound.len() {
        cx.error_spanned_by(query, count_mismatch(checked.placeholders, &bound));
        return None;
    }
    Some(Form::Template {
        query,
        read_only: checked.read_only,
    })
}

fn count_mismatch(placeholders: usize, bound: &[&Field]) -> String {
    let names: Vec<String> = bound.iter().map(|f| f.ident.to_string()).collect();
    let query = match placeholders {
        0 => "the query has no placeholders".to_owned(),
        1 => "the query has 1 placeholder".to_owned(),
        n => format!("the query has {n} placeholders"),
    };
    let fields = match bound.len() {
        0 => "no field is bound".to_owned(),
        1 => format!("1 field is bound: {}", names[0]),
        n => format!("{n} fields are bound: {}", names.join(", ")),
    };
    let advice = if placeholders < bound.len() {
        "; mark a field that is not a placeholder `#[param(skip)]` (a field named `options` is the tool's settings, never bound)"
    } else {
        "; each placeholder `$n` is bound from the n-th field (except `#[param(skip)]` fields and `options`): add a field for each"
    };
    format!("{query} but {fields}{advice}")
}

/// `operation = ...`: every field's n8n parameter name is an argument of
/// the operation, and the required ones are there.
fn check_operation(cx: &Ctxt, operation: &Ident, fields: &[Field]) -> Option<Form<'static>> {
    let op = operation.to_string();
    let article = if op.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    let args = operation_args(&op);
    let names: Vec<&str> = args.iter().map(|(_, param, _)| *param).collect();
    let used = arg_fields(fields);
    let mut ok = true;
    for f in &used {
        if !names.contains(&f.param.as_str()) {
            let hint = closest(&f.param, &names)
                .map_or_else(String::new, |b| format!("did you mean `{b}`? "));
            cx.error_spanned_by(
                f.ident,
                format!(
                    "parameter `{}` (field `{}`) is not an argument of {article} `{op}` tool; {hint}name the fields after its parameters: {} (and `options`, the tool's settings); mark other fields `#[param(skip)]`",
                    f.param,
                    f.ident,
                    names.join(", ")
                ),
            );
            ok = false;
        }
    }
    // A flattened group may fill any argument; which it fills is its own
    // `RequestArgs` impl's business, so required arguments are not checked.
    let groups = fields.iter().any(|f| f.group);
    let missing: Vec<String> = args
        .iter()
        .filter(|(_, param, required)| {
            *required && !groups && !used.iter().any(|f| f.param == *param)
        })
        .map(|(_, param, _)| format!("`{param}`"))
        .collect();
    if !missing.is_empty() {
        let what = if missing.len() == 1 {
            "a parameter"
        } else {
            "parameters"
        };
        cx.error_spanned_by(
            operation,
            format!(
                "{article} `{op}` tool needs {what} named {}: each argument of the request is read from the field whose parameter has that name (e.g. `table_name` or `#[param(name = \"tableName\")]`)",
                and_list(&missing)
            ),
        );
        ok = false;
    }
    ok.then_some(Form::Operation { op })
}

/// The body of `request()`.
fn request(form: &Form, fields: &[Field]) -> TokenStream {
    match form {
        Form::Template { query, read_only } => {
            let binds = arg_fields(fields).into_iter().map(|f| {
                let (ident, ty) = (f.ident, f.ty);
                // Spanned at the type, so that an unbindable type is the error's subject.
                quote_spanned!(ty.span()=> <#ty as ::nodekit::__private::sql::ToBind>::to_bind(&self.#ident))
            });
            quote! {
                ::nodekit::__private::sql::Request::Template(::nodekit::__private::sql::TemplateRequest {
                    sql: #query,
                    read_only: #read_only,
                    binds: ::std::vec![#(#binds),*],
                })
            }
        }
        Form::Operation { op } => {
            let used = arg_fields(fields);
            let values = used.iter().filter_map(|f| {
                let (ident, ty) = (f.ident, f.ty);
                let (arg, _, _) = operation_args(op).iter().find(|(_, param, _)| *param == f.param)?;
                let target = arg_type(arg);
                let arg = format_ident!("{arg}");
                // Spanned at the type, so that a type that does not fit is the error's subject.
                let value = quote_spanned!(ty.span()=> <#ty as ::nodekit::__private::RequestArg<#target>>::request_arg(&self.#ident));
                Some(quote!(#arg: #value))
            });
            let (variant, request) = match op.as_str() {
                "select" => (quote!(Select), quote!(SelectRequest)),
                "insert" => (quote!(Insert), quote!(InsertRequest)),
                "update" => (quote!(Update), quote!(UpdateRequest)),
                "delete" => (quote!(Delete), quote!(DeleteRequest)),
                "describe" => (quote!(Describe), quote!(DescribeRequest)),
                "upsert" => (quote!(Upsert), quote!(UpsertRequest)),
                "transaction" => (quote!(Transaction), quote!(TransactionRequest)),
                _ => (quote!(Execute), quote!(ExecuteRequest)),
            };
            // The rest of the request is defaults, unless every argument has a field.
            let rest = (used.len() < operation_args(op).len())
                .then(|| quote!(..::core::default::Default::default()));
            let groups: Vec<_> = fields.iter().filter(|f| f.group).collect();
            let fills = groups.iter().map(|f| {
                let (ident, ty) = (f.ident, f.ty);
                quote_spanned!(ty.span()=> <#ty as ::nodekit::__private::sql::RequestArgs>::fill(&self.#ident, &mut __request);)
            });
            let request = quote! {
                ::nodekit::__private::sql::Request::#variant(::nodekit::__private::sql::#request {
                    #(#values,)*
                    #rest
                })
            };
            if groups.is_empty() {
                request
            } else {
                quote! {{
                    let mut __request = #request;
                    #(#fills)*
                    __request
                }}
            }
        }
    }
}

/// The type of a request argument (they are named in `OPERATION_ARGS`).
fn arg_type(arg: &str) -> TokenStream {
    match arg {
        "limit" | "offset" | "time_limit" => quote!(::core::option::Option<i64>),
        "rows" | "values" => quote!(::nodekit::__private::Value),
        _ => quote!(::std::string::String),
    }
}

/// `fn options`, typed at the field so that another type is the error's subject.
fn options_fn(fields: &Fields) -> TokenStream {
    let f = fields
        .iter()
        .find(|f| f.ident.as_ref().is_some_and(|i| i == OPTIONS_FIELD))
        .expect("called when an `options` field exists");
    let ty = &f.ty;
    let value = quote_spanned!(ty.span()=> <#ty as ::core::clone::Clone>::clone(&self.options));
    quote! {
        fn options(&self) -> ::nodekit::__private::sql::ToolOptions {
            #value
        }
    }
}

/// `options: ToolOptions` is a collection parameter; saying so is optional.
fn imply_options_collection(fields: &mut Fields) {
    let Some(f) = fields
        .iter_mut()
        .find(|f| f.ident.as_ref().is_some_and(|i| i == OPTIONS_FIELD))
    else {
        return;
    };
    // Another type is refused by `fn options`, with one error at the type.
    let is_tool_options = matches!(&f.ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "ToolOptions"));
    let attrs = param_attrs(f);
    if is_tool_options
        && attrs.skip.is_none()
        && attrs.collection.is_none()
        && attrs.fixed_collection.is_none()
    {
        f.attrs.push(syn::parse_quote!(#[param(collection)]));
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        super::db_tool(args, item).to_string()
    }

    fn assert_contains(out: &str, expected: &[&str]) {
        for e in expected {
            assert!(out.contains(e), "missing {e:?} in {out}");
        }
    }

    /// Generated code names nothing of nodekit outside `__private`.
    #[test]
    fn generated_code_names_only_private_paths() {
        let out = expand(
            quote!(operation = select, name = "pick"),
            quote! {
                /// Picks rows.
                struct Pick {
                    /// The table.
                    #[from_ai]
                    table_name: String,
                    /// Limits.
                    options: ToolOptions,
                }
            },
        );
        assert!(out.contains(":: nodekit :: __private ::"), "{out}");
        assert_eq!(
            crate::expand::tests::outside_private(&out),
            Vec::<String>::new(),
            "{out}"
        );
    }

    #[test]
    fn template_binds_fields_in_order() {
        let out = expand(
            quote!(
                name = "findUser",
                query = "SELECT id FROM users WHERE email = $1 AND status = $2"
            ),
            quote! {
                /// Finds a user.
                struct FindUser {
                    #[from_ai]
                    email: String,
                    #[param(skip)]
                    cache: u32,
                    status: Option<String>,
                    options: ::nodekit::__private::sql::ToolOptions,
                }
            },
        );
        assert_contains(
            &out,
            &[
                "ai_node (name = \"findUser\" , output = tool , main_input , optional_credentials = [\"postgres\" , \"sqlite\"])",
                "read_only : true",
                "< String as :: nodekit :: __private :: sql :: ToBind > :: to_bind (& self . email) , < Option < String > as :: nodekit :: __private :: sql :: ToBind > :: to_bind (& self . status)",
                "fn options (& self)",
                "# [param (collection)] options",
            ],
        );
        assert!(
            !out.contains("self . cache"),
            "a skipped field is bound: {out}"
        );
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn template_mistakes_are_reported() {
        let item = quote! {
            /// Finds a user.
            struct FindUser { email: String, status: String, extra: u32 }
        };
        let out = expand(
            quote!(query = "SELECT * FROM users WHERE email = $1 AND status = $2"),
            item.clone(),
        );
        assert_contains(
            &out,
            &[
                "the query has 2 placeholders but 3 fields are bound: email, status, extra; mark a field that is not a placeholder `#[param(skip)]`",
                "unimplemented",
            ],
        );
        let out = expand(quote!(query = "SELECT $1, $3; SELECT 2"), item.clone());
        assert_contains(&out, &["the query has 2 statements"]);
        let out = expand(quote!(query = "SELECT $1, $3, $4"), item);
        assert_contains(&out, &["placeholder $2 is missing"]);
        let out = expand(
            quote!(query = "SELECT $1"),
            quote!(
                struct Empty;
            ),
        );
        assert_contains(
            &out,
            &["the query has 1 placeholder but no field is bound; each placeholder"],
        );
    }

    #[test]
    fn operation_maps_fields_by_name() {
        let out = expand(
            quote!(operation = select),
            quote! {
                /// Reads rows.
                struct Select { table_name: String, limit: Option<u32>, #[param(name = "whereConditions")] cond: String, #[param(skip)] other: u8 }
            },
        );
        assert_contains(
            &out,
            &[
                ":: nodekit :: __private :: sql :: Request :: Select (:: nodekit :: __private :: sql :: SelectRequest {",
                "table : < String as :: nodekit :: __private :: RequestArg < :: std :: string :: String >> :: request_arg (& self . table_name)",
                "filter : < String as :: nodekit :: __private :: RequestArg < :: std :: string :: String >> :: request_arg (& self . cond)",
                "limit : < Option < u32 > as :: nodekit :: __private :: RequestArg < :: core :: option :: Option < i64 > >>",
                ".. :: core :: default :: Default :: default ()",
            ],
        );
        let out = expand(
            quote!(operation = execute),
            quote! {
                /// Runs SQL.
                struct Execute { query: String }
            },
        );
        assert!(!out.contains("Default :: default"), "{out}");
    }

    #[test]
    fn operation_mistakes_are_reported() {
        let out = expand(
            quote!(operation = update),
            quote! {
                /// Changes rows.
                struct Update { tabel_name: String, where_conditions: String }
            },
        );
        assert_contains(
            &out,
            &[
                "parameter `tabelName` (field `tabel_name`) is not an argument of an `update` tool; did you mean `tableName`?",
                "an `update` tool needs parameters named `tableName` and `values`",
            ],
        );
        let out = expand(
            quote!(operation = selet),
            quote!(
                struct S;
            ),
        );
        assert_contains(&out, &["unknown operation `selet`; did you mean `select`?"]);
        let out = expand(
            quote!(operation = "select"),
            quote!(
                struct S;
            ),
        );
        assert_contains(&out, &["write it without quotes: `operation = select`"]);
    }

    #[test]
    fn keys_are_strict() {
        let out = expand(
            quote!(
                output = tool,
                querry = "SELECT 1",
                name = "a",
                name = "b",
                credentials = ["postgres"]
            ),
            quote!(
                struct S;
            ),
        );
        assert_contains(
            &out,
            &[
                "`output` cannot be set on `#[db_tool]`: a db_tool is always a tool node",
                "unknown key `querry` in `#[db_tool]`; did you mean `query`?",
                "duplicate key `name` in `#[db_tool]`",
                "remove \\\"postgres\\\" from `credentials`",
                "a db_tool needs `query = \\\"...\\\"`",
            ],
        );
        let out = expand(
            quote!(query = "SELECT 1", operation = select),
            quote!(
                struct S;
            ),
        );
        assert_contains(
            &out,
            &["either `query = \\\"...\\\"` (a fixed SQL template) or `operation = ...`, not both"],
        );
    }
}
