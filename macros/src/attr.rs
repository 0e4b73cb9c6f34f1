//! Parsing of the attribute grammar: `#[ai_node(...)]`, `#[param(...)]` and
//! `#[from_ai(...)]`. Unknown and repeated keys are spanned errors with a
//! "did you mean" suggestion.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, LitInt, LitStr, Token, UnOp};

use crate::ctxt::Ctxt;
use crate::symbol::{FROM_AI_KEYS, NODE_KEYS, PARAM_FLAGS, PARAM_KEYS};
use nodekit_rules::closest;

/// A number written in an attribute, with where it was written.
#[derive(Clone)]
pub struct Num {
    pub value: f64,
    pub is_int: bool,
    pub span: Span,
}

/// `#[ai_node(...)]`.
#[derive(Default)]
pub struct NodeAttrs {
    pub name: Option<LitStr>,
    pub display_name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub output: Option<Ident>,
    pub versions: Vec<Num>,
    pub default_version: Option<Num>,
    pub credentials: Vec<LitStr>,
    pub optional_credentials: Vec<LitStr>,
    pub main_input: Option<Span>,
    pub icon: Option<LitStr>,
    pub group: Vec<LitStr>,
    pub subtitle: Option<LitStr>,
    pub usable_as_tool: Option<Span>,
    pub package: Option<LitStr>,
    pub documentation_url: Option<LitStr>,
    pub notice: Option<LitStr>,
}

/// One `key = [values]` of `display_options(show(...))`.
pub struct Condition {
    /// Parameter name (field name or n8n name) or `@version`.
    pub key: String,
    pub key_span: Span,
    pub values: Vec<Expr>,
}

/// `display_options(show(...), hide(...))`.
#[derive(Default)]
pub struct DisplayAttrs {
    pub show: Vec<Condition>,
    pub hide: Vec<Condition>,
}

/// `#[param(...)]`.
#[derive(Default)]
pub struct ParamAttrs {
    pub name: Option<LitStr>,
    pub display_name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub default: Option<Expr>,
    pub required: Option<Span>,
    pub min: Option<Num>,
    pub max: Option<Num>,
    pub precision: Option<LitInt>,
    pub options: Option<(Span, Vec<LitStr>)>,
    pub display: Option<DisplayAttrs>,
    pub placeholder: Option<LitStr>,
    pub hint: Option<LitStr>,
    pub password: Option<Span>,
    pub rows: Option<LitInt>,
    pub no_data_expression: Option<Span>,
    pub load_options_method: Option<LitStr>,
    pub collection: Option<Span>,
    pub fixed_collection: Option<Span>,
    /// The fixed collection's group name, when given (`fixed_collection = "..."`).
    pub fixed_collection_group: Option<LitStr>,
    pub kind: Option<LitStr>,
    pub json: Option<Span>,
    pub skip: Option<Span>,
    pub flatten: Option<Span>,
}

/// `#[from_ai(...)]`.
pub struct FromAiAttrs {
    pub span: Span,
    pub key: Option<LitStr>,
    pub description: Option<LitStr>,
    pub ty: Option<LitStr>,
    pub default: Option<Expr>,
}

/// Tracks which keys one attribute has used, to report repeats and unknowns.
pub struct Keys<'a> {
    cx: &'a Ctxt,
    allowed: &'static [&'static str],
    attr: &'static str,
    seen: Vec<String>,
    /// Why a key of another attribute is not one of this one, and where it goes.
    elsewhere: fn(&str) -> Option<String>,
}

impl<'a> Keys<'a> {
    pub fn new(cx: &'a Ctxt, attr: &'static str, allowed: &'static [&'static str]) -> Self {
        Keys {
            cx,
            allowed,
            attr,
            seen: Vec::new(),
            elsewhere: |_| None,
        }
    }

    /// Names the attribute a misplaced key belongs in, instead of listing this one's keys.
    pub fn elsewhere(self, elsewhere: fn(&str) -> Option<String>) -> Self {
        Keys { elsewhere, ..self }
    }

    /// The key of `meta`, or `None` (after recording an error) when it is
    /// unknown or repeated. The value, if any, must then be skipped.
    pub fn key(&mut self, meta: &ParseNestedMeta) -> Option<String> {
        let path = &meta.path;
        let key = path
            .get_ident()
            .map(|i| i.to_string().trim_start_matches("r#").to_owned())
            .unwrap_or_default();
        if !self.allowed.contains(&key.as_str()) {
            if let Some(message) = (self.elsewhere)(&key) {
                self.cx.error_spanned_by(path, message);
                return None;
            }
            let hint = match closest(&key, self.allowed) {
                Some(best) => format!("; did you mean `{best}`?"),
                None => format!("; expected one of: {}", self.allowed.join(", ")),
            };
            let shown = quote::quote!(#path).to_string().replace(' ', "");
            self.cx.error_spanned_by(
                path,
                format!("unknown key `{shown}` in `#[{}]`{hint}", self.attr),
            );
            return None;
        }
        if self.seen.contains(&key) {
            self.cx
                .error_spanned_by(path, format!("duplicate key `{key}` in `#[{}]`", self.attr));
            return None;
        }
        self.seen.push(key.clone());
        Some(key)
    }
}

/// Consumes whatever follows an unknown key so parsing can go on.
pub fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

pub fn lit_str(meta: &ParseNestedMeta) -> syn::Result<LitStr> {
    meta.value()?.parse()
}

pub fn str_list(meta: &ParseNestedMeta) -> syn::Result<Vec<LitStr>> {
    let value = meta.value()?;
    let content;
    syn::bracketed!(content in value);
    Ok(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?
        .into_iter()
        .collect())
}

/// Reads a number literal (possibly negative) from an expression.
pub fn number(expr: &Expr) -> Option<Num> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => match lit {
            Lit::Int(i) => i.base10_parse::<f64>().ok().map(|value| Num {
                value,
                is_int: true,
                span: i.span(),
            }),
            Lit::Float(f) => f.base10_parse::<f64>().ok().map(|value| Num {
                value,
                is_int: false,
                span: f.span(),
            }),
            _ => None,
        },
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr: inner,
            ..
        }) => number(inner).map(|n| Num {
            value: -n.value,
            span: expr.span(),
            ..n
        }),
        _ => None,
    }
}

fn num(meta: &ParseNestedMeta) -> syn::Result<Num> {
    let expr: Expr = meta.value()?.parse()?;
    number(&expr).ok_or_else(|| syn::Error::new_spanned(&expr, "expected a number literal"))
}

fn num_list_or_one(meta: &ParseNestedMeta) -> syn::Result<Vec<Num>> {
    let value = meta.value()?;
    let exprs: Vec<Expr> = if value.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in value);
        Punctuated::<Expr, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect()
    } else {
        vec![value.parse()?]
    };
    exprs
        .iter()
        .map(|e| number(e).ok_or_else(|| syn::Error::new_spanned(e, "expected a number literal")))
        .collect()
}

/// Parses the arguments of `#[ai_node(...)]`.
pub fn node_attrs(cx: &Ctxt, args: TokenStream) -> NodeAttrs {
    let mut out = NodeAttrs::default();
    let mut keys = Keys::new(cx, "ai_node", NODE_KEYS);
    let parser = syn::meta::parser(|meta| {
        let Some(key) = keys.key(&meta) else {
            return skip_value(&meta);
        };
        match key.as_str() {
            "name" => out.name = Some(lit_str(&meta)?),
            "display_name" => out.display_name = Some(lit_str(&meta)?),
            "description" => out.description = Some(lit_str(&meta)?),
            "output" => out.output = Some(meta.value()?.parse()?),
            "version" => out.versions = num_list_or_one(&meta)?,
            "default_version" => out.default_version = Some(num(&meta)?),
            "credentials" => out.credentials = str_list(&meta)?,
            "optional_credentials" => out.optional_credentials = str_list(&meta)?,
            "main_input" => out.main_input = Some(meta.path.span()),
            "icon" => out.icon = Some(lit_str(&meta)?),
            "group" => out.group = str_list(&meta)?,
            "subtitle" => out.subtitle = Some(lit_str(&meta)?),
            "usable_as_tool" => out.usable_as_tool = Some(meta.path.span()),
            "package" => out.package = Some(lit_str(&meta)?),
            "documentation_url" => out.documentation_url = Some(lit_str(&meta)?),
            "notice" => out.notice = Some(lit_str(&meta)?),
            _ => unreachable!("every key of NODE_KEYS is handled"),
        }
        Ok(())
    });
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
    out
}

/// Parses every `#[param(...)]` attribute of a field. A key may appear
/// once across all of them: a second one is an error at its token, never
/// a silent override.
pub fn param_attrs(cx: &Ctxt, attrs: &[syn::Attribute]) -> ParamAttrs {
    let mut keys = Keys::new(cx, "param", PARAM_KEYS);
    let mut out = ParamAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("param")) {
        param_attr(cx, attr, &mut keys, &mut out);
    }
    out
}

/// Parses one `#[param(...)]` attribute into `out`.
fn param_attr(cx: &Ctxt, attr: &syn::Attribute, keys: &mut Keys<'_>, out: &mut ParamAttrs) {
    let result = attr.parse_nested_meta(|meta| {
        let Some(key) = keys.key(&meta) else {
            return skip_value(&meta);
        };
        let flag = || meta.path.span();
        match key.as_str() {
            "name" => out.name = Some(lit_str(&meta)?),
            "display_name" => out.display_name = Some(lit_str(&meta)?),
            "description" => out.description = Some(lit_str(&meta)?),
            "default" => out.default = Some(meta.value()?.parse()?),
            "required" => out.required = Some(flag()),
            "min" => out.min = Some(num(&meta)?),
            "max" => out.max = Some(num(&meta)?),
            "precision" => out.precision = Some(meta.value()?.parse()?),
            "options" => out.options = Some((meta.path.span(), str_list(&meta)?)),
            "display_options" => out.display = Some(display_options(cx, &meta)?),
            "placeholder" => out.placeholder = Some(lit_str(&meta)?),
            "hint" => out.hint = Some(lit_str(&meta)?),
            "password" => out.password = Some(flag()),
            "rows" => out.rows = Some(meta.value()?.parse()?),
            "no_data_expression" => out.no_data_expression = Some(flag()),
            "load_options_method" => out.load_options_method = Some(lit_str(&meta)?),
            "collection" => out.collection = Some(flag()),
            "fixed_collection" => {
                out.fixed_collection = Some(flag());
                if meta.input.peek(syn::Token![=]) {
                    out.fixed_collection_group = Some(lit_str(&meta)?);
                }
            }
            "kind" => out.kind = Some(lit_str(&meta)?),
            "json" => out.json = Some(flag()),
            "skip" => out.skip = Some(flag()),
            "flatten" => out.flatten = Some(flag()),
            _ => unreachable!("every key of PARAM_KEYS is handled"),
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.syn_error(e);
    }
}

fn display_options(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<DisplayAttrs> {
    let mut out = DisplayAttrs::default();
    let mut keys = Keys::new(cx, "param(display_options)", &["show", "hide"]);
    meta.parse_nested_meta(|inner| {
        let Some(key) = keys.key(&inner) else {
            return skip_value(&inner);
        };
        let content;
        syn::parenthesized!(content in inner.input);
        let conditions = conditions(&content)?;
        if key == "show" {
            out.show = conditions;
        } else {
            out.hide = conditions;
        }
        Ok(())
    })?;
    Ok(out)
}

/// `key = [v, ...], "@version" = [1], ...`
fn conditions(input: ParseStream) -> syn::Result<Vec<Condition>> {
    let mut out = Vec::new();
    while !input.is_empty() {
        let (key, key_span) = if input.peek(LitStr) {
            let s: LitStr = input.parse()?;
            (s.value(), s.span())
        } else {
            let i = Ident::parse_any(input)?;
            (i.to_string(), i.span())
        };
        input.parse::<Token![=]>()?;
        let content;
        syn::bracketed!(content in input);
        let values = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect();
        out.push(Condition {
            key,
            key_span,
            values,
        });
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(out)
}

/// Parses `#[from_ai]` or `#[from_ai(...)]`.
pub fn from_ai_attrs(cx: &Ctxt, attr: &syn::Attribute) -> FromAiAttrs {
    let mut out = FromAiAttrs {
        span: attr.span(),
        key: None,
        description: None,
        ty: None,
        default: None,
    };
    if matches!(attr.meta, syn::Meta::Path(_)) {
        return out;
    }
    let mut keys = Keys::new(cx, "from_ai", FROM_AI_KEYS).elsewhere(param_key_in_from_ai);
    let result = attr.parse_nested_meta(|meta| {
        let Some(key) = keys.key(&meta) else {
            return skip_value(&meta);
        };
        match key.as_str() {
            "key" => out.key = Some(lit_str(&meta)?),
            "description" => out.description = Some(lit_str(&meta)?),
            "type" => out.ty = Some(lit_str(&meta)?),
            "default" => out.default = Some(meta.value()?.parse()?),
            _ => unreachable!("every key of FROM_AI_KEYS is handled"),
        }
        Ok(())
    });
    if let Err(e) = result {
        cx.syn_error(e);
    }
    out
}

/// The error for a `#[param]` key written in `#[from_ai]`: a field's bounds,
/// choices and labels are the parameter's, and the argument schema takes
/// them from there, so the key only needs moving.
fn param_key_in_from_ai(key: &str) -> Option<String> {
    if FROM_AI_KEYS.contains(&key) || !PARAM_KEYS.contains(&key) {
        return None;
    }
    let usage = match key {
        k if PARAM_FLAGS.contains(&k) => key.to_owned(),
        "options" => "options = [..]".to_owned(),
        "display_options" => "display_options(..)".to_owned(),
        _ => format!("{key} = .."),
    };
    let what = if matches!(key, "min" | "max") {
        "bounds belong"
    } else {
        "it belongs"
    };
    Some(format!(
        "`{key}` is not a key of `#[from_ai]`; {what} in `#[param({usage})]`"
    ))
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use syn::parse::Parser as _;

    use super::*;

    /// A value of the shape the parser reads for `key`.
    fn sample(key: &str) -> TokenStream {
        match key {
            "output" => quote!(= tool),
            "version" | "options" | "credentials" | "optional_credentials" | "group" => {
                quote!(= ["1"])
            }
            "default_version" | "default" | "min" | "max" | "precision" | "rows" => quote!(= 1),
            "display_options" => quote!((show(a = [1]))),
            "main_input" | "usable_as_tool" | "required" | "password" | "no_data_expression"
            | "collection" | "fixed_collection" | "json" | "skip" | "flatten" => quote!(),
            _ => quote!(= "x"),
        }
    }

    fn attribute(tokens: TokenStream) -> syn::Attribute {
        syn::Attribute::parse_outer
            .parse2(tokens)
            .expect("an attribute")
            .remove(0)
    }

    /// The key tables in `symbol` are the grammar: every key they list is
    /// read by its parser (an unhandled one would hit `unreachable!`), and
    /// keys outside them are refused before parsing.
    #[test]
    fn every_table_key_is_parsed() {
        for key in NODE_KEYS {
            let cx = Ctxt::default();
            let ident = syn::Ident::new(key, Span::call_site());
            let value = sample(key);
            // `version = ["1"]` is not a number list: parse it as one.
            let value = if *key == "version" {
                quote!(= [1])
            } else {
                value
            };
            node_attrs(&cx, quote!(#ident #value));
            assert!(cx.check().is_ok(), "#[ai_node({key} ...)]");
        }
        for key in PARAM_KEYS {
            let cx = Ctxt::default();
            let ident = syn::Ident::new(key, Span::call_site());
            let value = sample(key);
            param_attrs(&cx, &[attribute(quote!(#[param(#ident #value)]))]);
            assert!(cx.check().is_ok(), "#[param({key} ...)]");
        }
        for key in FROM_AI_KEYS {
            let cx = Ctxt::default();
            let ident = syn::Ident::new(key, Span::call_site());
            let value = sample(key);
            from_ai_attrs(&cx, &attribute(quote!(#[from_ai(#ident #value)])));
            assert!(cx.check().is_ok(), "#[from_ai({key} ...)]");
        }
        let cx = Ctxt::default();
        param_attrs(&cx, &[attribute(quote!(#[param(nonsense = 1)]))]);
        assert!(cx.check().is_err());
    }

    /// A `#[param]` key inside `#[from_ai]` says where it goes, and parsing
    /// goes on past its value.
    #[test]
    fn param_keys_in_from_ai_name_their_attribute() {
        for (tokens, expected) in [
            (
                quote!(#[from_ai(min = 0, default = 1)]),
                "`min` is not a key of `#[from_ai]`; bounds belong in `#[param(min = ..)]`",
            ),
            (
                quote!(#[from_ai(max = 9)]),
                "`max` is not a key of `#[from_ai]`; bounds belong in `#[param(max = ..)]`",
            ),
            (
                quote!(#[from_ai(options = ["a"])]),
                "`options` is not a key of `#[from_ai]`; it belongs in `#[param(options = [..])]`",
            ),
            (
                quote!(#[from_ai(display_name = "X")]),
                "`display_name` is not a key of `#[from_ai]`; it belongs in `#[param(display_name = ..)]`",
            ),
            (
                quote!(#[from_ai(required)]),
                "`required` is not a key of `#[from_ai]`; it belongs in `#[param(required)]`",
            ),
        ] {
            let cx = Ctxt::default();
            from_ai_attrs(&cx, &attribute(tokens));
            let error = cx.check().err().map(|e| e.to_string());
            assert_eq!(error.as_deref(), Some(expected));
        }
        let cx = Ctxt::default();
        let out = from_ai_attrs(&cx, &attribute(quote!(#[from_ai(min = 0, default = 1)])));
        assert!(
            out.default.is_some(),
            "the key after a misplaced one is read"
        );
        assert!(cx.check().is_err());
        // A key of neither attribute keeps the usual suggestion.
        let cx = Ctxt::default();
        from_ai_attrs(&cx, &attribute(quote!(#[from_ai(descripton = "x")])));
        assert_eq!(
            cx.check().err().map(|e| e.to_string()).as_deref(),
            Some("unknown key `descripton` in `#[from_ai]`; did you mean `description`?")
        );
    }
}
