//! Compile-time checks. Each failure is a spanned error on the offending
//! token; all of them are collected before anything is expanded.

use std::collections::HashMap;

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr};

use crate::ast::{Container, Field, Prim};
use crate::attr::{self, NodeAttrs};
use crate::ctxt::Ctxt;
use crate::symbol::{FROM_AI_TYPES, KINDS, OUTPUTS};
use nodekit_rules::closest;

/// Checks `#[ai_node(...)]` against the struct it annotates.
pub fn node(cx: &Ctxt, attrs: &NodeAttrs, c: &Container, versions: &[f64]) {
    if let Some(name) = &attrs.name
        && !is_node_name(&name.value())
    {
        cx.error_spanned_by(
                name,
                format!(
                    "invalid node name `{}`: use 1 to 64 letters and digits, starting with a letter (n8n style, e.g. `memoryRedis`)",
                    name.value()
                ),
            );
    }
    if attrs.description.is_none() && c.doc.is_none() {
        cx.error_spanned_by(
            c.ident,
            "a node needs a description: add a doc comment (`/// What this node does.`) or `description = \"...\"` to #[ai_node]",
        );
    }
    if let Some(output) = &attrs.output {
        let o = output.to_string();
        if !OUTPUTS.contains(&o.as_str()) {
            let hint =
                closest(&o, OUTPUTS).map_or_else(String::new, |b| format!("did you mean `{b}`? "));
            cx.error_spanned_by(
                output,
                format!(
                    "unknown output `{o}`; {hint}expected one of: {}",
                    OUTPUTS.join(", ")
                ),
            );
        }
        if attrs.usable_as_tool.is_some() && o != "main" {
            cx.error_spanned_by(
                output,
                "`usable_as_tool` applies to main nodes only; a sub-node is connected to an agent directly",
            );
        }
    }
    let mut seen: Vec<f64> = Vec::new();
    for v in &attrs.versions {
        if v.value <= 0.0 {
            cx.syn_error(syn::Error::new(
                v.span,
                format!("node version {} is not positive", v.value),
            ));
        } else if seen.contains(&v.value) {
            cx.syn_error(syn::Error::new(
                v.span,
                format!("version {} is listed twice", v.value),
            ));
        }
        seen.push(v.value);
    }
    if let Some(d) = &attrs.default_version
        && !versions.contains(&d.value)
    {
        cx.syn_error(syn::Error::new(
            d.span,
            format!(
                "`default_version = {}` is not one of the node's versions ({})",
                d.value,
                list_versions(versions)
            ),
        ));
    }
    if let Some(notice) = &attrs.notice
        && let Some(f) = c.fields.iter().find(|f| f.name == "notice")
    {
        cx.error_spanned_by(
            notice,
            format!(
                "the node's notice is a property named `notice`, which field `{}` already uses; rename the field's parameter",
                f.ident
            ),
        );
    }
    if let Some(span) = attrs.main_input {
        let output = attrs.output.as_ref().map(ToString::to_string);
        if output.as_deref() != Some("tool") {
            cx.syn_error(syn::Error::new(
                span,
                format!(
                    "`main_input` applies to tool nodes (`output = tool`), whose main input is optional context; this node's output is `{}`",
                    output.as_deref().unwrap_or("main")
                ),
            ));
        }
    }
    let mut seen: Vec<String> = Vec::new();
    for cred in attrs.credentials.iter().chain(&attrs.optional_credentials) {
        if seen.contains(&cred.value()) {
            cx.error_spanned_by(
                cred,
                format!(
                    "credential type `{}` is listed twice (in `credentials` or `optional_credentials`)",
                    cred.value()
                ),
            );
        }
        seen.push(cred.value());
        if !is_node_name(&cred.value()) {
            cx.error_spanned_by(
                cred,
                format!(
                    "invalid credential type name `{}`: use letters and digits, starting with a letter (e.g. `openAiApi`)",
                    cred.value()
                ),
            );
        }
    }
}

fn list_versions(versions: &[f64]) -> String {
    versions
        .iter()
        .map(f64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_node_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric())
        && s.len() <= 64
}

/// Checks the fields; `versions` are the node's versions (empty for a collection).
pub fn fields(cx: &Ctxt, c: &Container, versions: &[f64]) {
    let mut names: HashMap<&str, &Field> = HashMap::new();
    let mut ai_keys: HashMap<String, &Field> = HashMap::new();
    for f in c.fields.iter().filter(|f| f.attrs.skip.is_none()) {
        if let Some(span) = f.attrs.flatten {
            flattened(cx, f, span);
            continue;
        }
        let name_tokens = name_span(f);
        if !is_param_name(&f.name) {
            cx.syn_error(syn::Error::new(
                name_tokens,
                format!(
                    "invalid parameter name `{}`: use letters, digits and `_`, not starting with a digit",
                    f.name
                ),
            ));
        }
        if let Some(first) = names.insert(&f.name, f) {
            cx.syn_error(syn::Error::new(
                name_tokens,
                format!(
                    "duplicate parameter name `{}`: field `{}` already has it",
                    f.name, first.ident
                ),
            ));
        }
        field(cx, f);
        if let Some(ai) = &f.from_ai {
            let key = ai
                .key
                .as_ref()
                .map_or_else(|| f.name.clone(), LitStr::value);
            if let Some(first) = ai_keys.insert(key.clone(), f) {
                cx.syn_error(syn::Error::new(
                    ai.key.as_ref().map_or(ai.span, LitStr::span),
                    format!(
                        "duplicate $fromAI key `{key}`: field `{}` already uses it; give this one `key = \"...\"`",
                        first.ident
                    ),
                ));
            }
        }
    }
    for f in &c.fields {
        if let Some(d) = &f.attrs.display {
            for cond in d.show.iter().chain(&d.hide) {
                condition(cx, c, f, cond, versions);
            }
        }
    }
}

/// A `#[param(flatten)]` field: a `#[derive(NodeParams)]` struct whose
/// fields are the node's own parameters, so the field itself has no
/// parameter settings.
fn flattened(cx: &Ctxt, f: &Field, span: Span) {
    let a = &f.attrs;
    let others = [
        (a.name.as_ref().map(LitStr::span), "name"),
        (a.display_name.as_ref().map(LitStr::span), "display_name"),
        (a.description.as_ref().map(LitStr::span), "description"),
        (a.default.as_ref().map(Spanned::span), "default"),
        (a.required, "required"),
        (a.min.as_ref().map(|n| n.span), "min"),
        (a.max.as_ref().map(|n| n.span), "max"),
        (a.precision.as_ref().map(Spanned::span), "precision"),
        (a.options.as_ref().map(|(s, _)| *s), "options"),
        (a.display.as_ref().map(|_| span), "display_options"),
        (a.placeholder.as_ref().map(LitStr::span), "placeholder"),
        (a.hint.as_ref().map(LitStr::span), "hint"),
        (a.password, "password"),
        (a.rows.as_ref().map(Spanned::span), "rows"),
        (a.no_data_expression, "no_data_expression"),
        (
            a.load_options_method.as_ref().map(LitStr::span),
            "load_options_method",
        ),
        (a.collection, "collection"),
        (a.fixed_collection, "fixed_collection"),
        (a.kind.as_ref().map(LitStr::span), "kind"),
        (a.json, "json"),
    ];
    for (at, key) in others {
        if let Some(at) = at {
            cx.syn_error(syn::Error::new(
                at,
                format!("`{key}` does not go with `flatten`: a flattened group has no parameter of its own; set `{key}` on the group's fields"),
            ));
        }
    }
    if let Some(ai) = &f.from_ai {
        cx.syn_error(syn::Error::new(
            ai.span,
            "`#[from_ai]` does not go with `flatten`: mark the group's fields instead",
        ));
    }
    if f.optional || f.elem.is_some() {
        cx.error_spanned_by(
            f.inner,
            "a `flatten` field is a `#[derive(NodeParams)]` struct, not an `Option` or a `Vec` of one",
        );
    }
}

fn name_span(f: &Field) -> Span {
    f.attrs.name.as_ref().map_or(f.ident.span(), LitStr::span)
}

fn is_param_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn field(cx: &Ctxt, f: &Field) {
    let a = &f.attrs;
    if let Some(skip) = a.skip {
        if f.from_ai.is_some() {
            cx.syn_error(syn::Error::new(
                skip,
                "a skipped field cannot be filled by `#[from_ai]`",
            ));
        }
        return;
    }
    let ty_text = f.inner.to_token_stream().to_string().replace(' ', "");
    let default_fits = a
        .default
        .as_ref()
        .is_none_or(|default| value(cx, f, default, "default", true));
    let bounds_agree = match (&a.min, &a.max) {
        (Some(min), Some(max)) if min.value > max.value => {
            cx.syn_error(syn::Error::new(
                min.span,
                format!(
                    "`min = {}` is greater than `max = {}`",
                    min.value, max.value
                ),
            ));
            false
        }
        _ => true,
    };
    // Against bounds that contradict themselves any default is wrong; the
    // bounds are the mistake to report. A `#[from_ai]` field's own default
    // is refused below.
    if let Some(default) = &a.default
        && default_fits
        && bounds_agree
        && f.from_ai.is_none()
    {
        within_bounds(cx, f, default, "default");
    }
    let known = f.prim != Prim::Other;
    for (span, what) in [
        (a.min.as_ref().map(|n| n.span), "min"),
        (a.max.as_ref().map(|n| n.span), "max"),
        (a.precision.as_ref().map(|p| p.span()), "precision"),
    ] {
        if let Some(span) = span
            && known
            && !f.prim.is_number()
        {
            cx.syn_error(syn::Error::new(
                span,
                format!(
                    "`{what}` applies to number parameters, but `{}` is `{ty_text}`",
                    f.ident
                ),
            ));
        }
    }
    for (span, what) in [
        (a.password, "password"),
        (a.rows.as_ref().map(|r| r.span()), "rows"),
    ] {
        if let Some(span) = span
            && known
            && f.prim != Prim::Str
        {
            cx.syn_error(syn::Error::new(
                span,
                format!(
                    "`{what}` applies to string parameters, but `{}` is `{ty_text}`",
                    f.ident
                ),
            ));
        }
    }
    if let Some((span, options)) = &a.options {
        if f.elem.is_some() {
            cx.syn_error(syn::Error::new(
                *span,
                "inline `options` choose one string; for several choices use a `Vec` of an enum (n8n's multiOptions)",
            ));
        }
        if options.is_empty() {
            cx.syn_error(syn::Error::new(*span, "`options` needs at least one value"));
        }
        if known && f.prim != Prim::Str {
            cx.syn_error(syn::Error::new(
                *span,
                format!(
                    "inline `options` apply to string parameters; for `{ty_text}` derive the choices from an enum instead"
                ),
            ));
        }
    }
    if let Some(kind) = &a.kind
        && !KINDS.contains(&kind.value().as_str())
    {
        let v = kind.value();
        let hint = closest(&v, KINDS).map_or_else(String::new, |b| format!("did you mean `{b}`? "));
        cx.error_spanned_by(
            kind,
            format!(
                "unknown parameter kind `{v}`; {hint}expected one of: {}",
                KINDS.join(", ")
            ),
        );
    }
    if let (Some(default), true) = (
        &a.default,
        a.collection.is_some() || a.fixed_collection.is_some(),
    ) {
        cx.error_spanned_by(
            default,
            "a collection has no default of its own: give its fields defaults instead",
        );
    }
    if let (Some(c), Some(_)) = (a.collection, a.fixed_collection) {
        cx.syn_error(syn::Error::new(
            c,
            "a parameter is either a `collection` or a `fixed_collection`, not both",
        ));
    }
    if let Some(span) = a.fixed_collection
        && f.elem.is_none()
    {
        cx.syn_error(syn::Error::new(
                span,
                format!("a `fixed_collection` field must be a `Vec<T>` of a `#[derive(NodeParams)]` struct, not `{ty_text}`"),
            ));
    }
    if let Some(display) = &a.display
        && !f.optional
        && !has_plain_default(f)
        && a.collection.is_none()
        && a.fixed_collection.is_none()
    {
        let span = display
            .show
            .first()
            .or(display.hide.first())
            .map_or(f.ident.span(), |c| c.key_span);
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "`{}` has display_options, so it may be hidden, and a hidden parameter has no value: make the field an `Option` or give it a default that is not an expression",
                f.ident
            ),
        ));
    }
    if let Some(ai) = &f.from_ai {
        if let Some(default) = &a.default {
            cx.error_spanned_by(
                default,
                "a `#[from_ai]` parameter's default is its $fromAI expression; put the value used when the LLM leaves it out in `#[from_ai(default = ...)]`",
            );
        }
        if let Some(key) = &ai.key {
            from_ai_key(cx, &key.value(), key.span());
        } else if !nodekit_rules::is_from_ai_key(&f.name) {
            from_ai_key(cx, &f.name, ai.span);
        }
        if let Some(ty) = &ai.ty
            && !FROM_AI_TYPES.contains(&ty.value().as_str())
        {
            cx.error_spanned_by(
                ty,
                format!(
                    "invalid $fromAI type `{}`: expected one of {}",
                    ty.value(),
                    FROM_AI_TYPES.join(", ")
                ),
            );
        }
        if let Some(default) = &ai.default
            && value(cx, f, default, "$fromAI default", false)
            && bounds_agree
        {
            within_bounds(cx, f, default, "$fromAI default");
        }
    }
}

/// A number default outside `min`/`max` would fail the parameter's own
/// check on every run, so it is refused here, at the default's token.
fn within_bounds(cx: &Ctxt, f: &Field, expr: &Expr, what: &str) {
    let Some(n) = attr::number(expr) else {
        return;
    };
    let a = &f.attrs;
    if let Some(min) = &a.min
        && n.value < min.value
    {
        cx.error_spanned_by(
            expr,
            format!(
                "{what} `{}` is less than `min = {}` of parameter `{}`",
                n.value, min.value, f.ident
            ),
        );
    } else if let Some(max) = &a.max
        && n.value > max.value
    {
        cx.error_spanned_by(
            expr,
            format!(
                "{what} `{}` is greater than `max = {}` of parameter `{}`",
                n.value, max.value, f.ident
            ),
        );
    }
}

/// A default that needs no resolving (not an `=` expression, not `$fromAI`).
fn has_plain_default(f: &Field) -> bool {
    let Some(default) = &f.attrs.default else {
        return false;
    };
    f.from_ai.is_none()
        && !matches!(default, Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value().starts_with('='))
}

fn from_ai_key(cx: &Ctxt, key: &str, span: Span) {
    if !nodekit_rules::is_from_ai_key(key) {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "invalid $fromAI key `{key}`: use 1 to 64 letters, digits, `_` or `-` (n8n's rule)"
            ),
        ));
    }
}

/// Checks a literal written for field `f` (a default, or a display
/// condition value); `false` when it reported an error.
fn value(cx: &Ctxt, f: &Field, expr: &Expr, what: &str, allow_expression: bool) -> bool {
    let lit = match expr {
        Expr::Lit(ExprLit { lit, .. }) => Some(lit),
        _ => None,
    };
    if let Some(Lit::Str(s)) = lit {
        if s.value().starts_with('=') {
            if !allow_expression {
                cx.error_spanned_by(s, format!("a {what} cannot be an n8n expression"));
            }
            return allow_expression;
        }
        if let Some((_, options)) = &f.attrs.options
            && !options.iter().any(|o| o.value() == s.value())
        {
            let list: Vec<String> = options
                .iter()
                .map(|o| format!("\"{}\"", o.value()))
                .collect();
            cx.error_spanned_by(
                s,
                format!(
                    "{what} \"{}\" is not among the options of parameter `{}`: {}",
                    s.value(),
                    f.ident,
                    list.join(", ")
                ),
            );
            return false;
        }
    }
    let number = attr::number(expr);
    let fits = match f.prim {
        Prim::Other | Prim::Json => return true,
        Prim::Str => matches!(lit, Some(Lit::Str(_))),
        Prim::Bool => matches!(lit, Some(Lit::Bool(_))),
        Prim::Float => number.is_some(),
        Prim::Int { signed } => number
            .as_ref()
            .is_some_and(|n| n.is_int && (signed || n.value >= 0.0)),
    };
    // A non-literal expression of the right type is fine; the compiler checks it.
    let is_literal = lit.is_some() || number.is_some();
    if is_literal && !fits {
        let ty = f.inner.to_token_stream().to_string().replace(' ', "");
        let shown = match &number {
            Some(n) => n.value.to_string(),
            None => expr.to_token_stream().to_string(),
        };
        let expected = match f.prim {
            Prim::Int { signed: false } => "a non-negative integer",
            Prim::Int { signed: true } => "an integer",
            other => other.describe(),
        };
        cx.error_spanned_by(
            expr,
            format!(
                "{what} `{shown}` does not fit parameter `{}` of type `{ty}`: expected {expected}",
                f.ident
            ),
        );
        return false;
    }
    true
}

fn condition(cx: &Ctxt, c: &Container, owner: &Field, cond: &attr::Condition, versions: &[f64]) {
    if cond.key == "@version" {
        // A collection (no versions of its own) can only check that these are numbers.
        for v in &cond.values {
            match attr::number(v) {
                Some(n) if versions.is_empty() || versions.contains(&n.value) => {}
                Some(_) => cx.error_spanned_by(
                    v,
                    format!(
                        "`@version` {} is not a version of this node ({})",
                        v.to_token_stream(),
                        list_versions(versions)
                    ),
                ),
                None => cx.error_spanned_by(v, "`@version` values are version numbers"),
            }
        }
        return;
    }
    let target = c
        .fields
        .iter()
        .filter(|f| f.attrs.skip.is_none())
        .find(|f| f.name == cond.key || f.ident == cond.key.as_str());
    let Some(target) = target else {
        if c.fields.iter().any(|f| f.attrs.flatten.is_some()) {
            // The name may be one of a flattened group's, known only at run time.
            return;
        }
        let names: Vec<&str> = c.fields.iter().map(|f| f.name.as_str()).collect();
        let hint = closest(&cond.key, &names)
            .map_or_else(String::new, |b| format!("; did you mean `{b}`?"));
        cx.syn_error(syn::Error::new(
            cond.key_span,
            format!(
                "display_options refers to `{}`, which is not a parameter of `{}`{hint}",
                cond.key, c.ident
            ),
        ));
        return;
    };
    if std::ptr::eq(target, owner) {
        cx.syn_error(syn::Error::new(
            cond.key_span,
            "a parameter's display_options cannot depend on itself",
        ));
        return;
    }
    for v in &cond.values {
        value(cx, target, v, "display_options value", false);
    }
}
