//! Code generation. Generated code names `::nodekit::__private` by absolute
//! path and lives in `const _: () = { ... };` blocks, so it neither needs
//! imports in the user's crate nor leaks names into it.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr};

use crate::ast::{Container, Field, Prim};
use crate::attr::{self, NodeAttrs};
use crate::case;
use crate::ctxt::Ctxt;
use crate::valid;

/// `#[ai_node(...)]` on a struct.
pub fn ai_node(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item: syn::ItemStruct = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            // Keep the item, so that its uses do not add "cannot find" errors.
            let error = syn::Error::new(e.span(), "#[ai_node] goes on a struct with named fields")
                .to_compile_error();
            return quote!(#item #error);
        }
    };
    let cx = Ctxt::default();
    let attrs = attr::node_attrs(&cx, args);
    let generated = {
        let c = Container::new(&cx, &item.attrs, &item.ident, &item.generics, &item.fields);
        let versions = versions(&attrs);
        valid::node(&cx, &attrs, &c, &versions);
        valid::fields(&cx, &c, &versions);
        if cx.has_errors() {
            fallback(&c, true)
        } else {
            let params = params_impl(&c);
            let node = node_impl(&attrs, &c, &versions);
            quote!(#params #node)
        }
    };
    let errors = cx.check().err().map(|e| e.to_compile_error());
    strip_helper_attrs(&mut item);
    quote! {
        #item
        #errors
        const _: () = { #generated };
    }
}

/// `#[derive(NodeParams)]` on a struct.
pub fn node_params(item: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let syn::Data::Struct(data) = &input.data else {
        return syn::Error::new(
            input.ident.span(),
            "#[derive(NodeParams)] goes on a struct with named fields",
        )
        .to_compile_error();
    };
    let cx = Ctxt::default();
    let c = Container::new(
        &cx,
        &input.attrs,
        &input.ident,
        &input.generics,
        &data.fields,
    );
    valid::fields(&cx, &c, &[]);
    let generated = if cx.has_errors() {
        fallback(&c, false)
    } else {
        params_impl(&c)
    };
    let errors = cx.check().err().map(|e| e.to_compile_error());
    quote! {
        #errors
        const _: () = { #generated };
    }
}

fn versions(attrs: &NodeAttrs) -> Vec<f64> {
    if attrs.versions.is_empty() {
        vec![1.0]
    } else {
        attrs.versions.iter().map(|v| v.value).collect()
    }
}

fn strip_helper_attrs(item: &mut syn::ItemStruct) {
    for f in item.fields.iter_mut() {
        f.attrs
            .retain(|a| !a.path().is_ident("param") && !a.path().is_ident("from_ai"));
    }
}

/// Stand-in impls emitted next to compile errors, so that one mistake gives
/// one error rather than a cascade of "trait not implemented".
fn fallback(c: &Container, node: bool) -> TokenStream {
    if c.generic {
        // Impls without the struct's generics would only add errors.
        return TokenStream::new();
    }
    let ident = c.ident;
    let node_impl = node.then(|| {
        quote! {
            #[automatically_derived]
            impl ::nodekit::__private::Node for #ident {
                const NAME: &'static str = "";
                fn description() -> &'static ::nodekit::__private::NodeDescription {
                    ::core::unimplemented!()
                }
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl ::nodekit::__private::Params for #ident {
            fn properties() -> ::std::vec::Vec<::nodekit::__private::NodeProperty> {
                ::core::unimplemented!()
            }
            fn from_params_at(
                _: &::nodekit::__private::Map<::std::string::String, ::nodekit::__private::Value>,
                _: &::nodekit::__private::Location<'_>,
            ) -> ::nodekit::__private::Result<Self> {
                ::core::unimplemented!()
            }
        }
        #node_impl
    }
}

fn default_fn(f: &Field) -> proc_macro2::Ident {
    format_ident!("__nodekit_default_{}", f.ident)
}

/// How an author's `default = ...` is used.
enum Default<'a> {
    /// `"=..."`: an n8n expression, kept as text.
    Expression(&'a LitStr),
    /// A string for a JSON parameter: JSON text, as n8n stores it.
    JsonText(&'a LitStr),
    /// A Rust value of the field's type.
    Typed(&'a Expr),
}

fn default_of<'a>(f: &'a Field) -> Option<Default<'a>> {
    let expr = f.attrs.default.as_ref()?;
    Some(match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) if s.value().starts_with('=') => Default::Expression(s),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) if is_json_text(f) => Default::JsonText(s),
        typed => Default::Typed(typed),
    })
}

/// A string value of this parameter is JSON text to parse.
fn is_json_text(f: &Field) -> bool {
    f.prim == Prim::Json
        || f.attrs.json.is_some()
        || f.attrs.kind.as_ref().is_some_and(|k| k.value() == "json")
}

/// `expr` as a value of `f`'s (inner) type; integer literals widen to floats.
fn typed(f: &Field, expr: &Expr) -> TokenStream {
    let ty = f.inner;
    let span = expr.span();
    if f.prim == Prim::Float
        && let Some(n) = attr::number(expr).filter(|n| n.is_int)
    {
        // `1` for an `f64` field is written `1.0`, typed by the field.
        let mut lit = Literal::f64_unsuffixed(n.value);
        lit.set_span(span);
        return quote_spanned!(span=> ::nodekit::__private::fit::<#ty, _>(#lit));
    }
    quote_spanned!(span=> ::nodekit::__private::fit::<#ty, _>(#expr))
}

fn params_impl(c: &Container) -> TokenStream {
    let ident = c.ident;
    let params: Vec<&Field> = c.fields.iter().filter(|f| f.attrs.skip.is_none()).collect();
    let default_fns = params.iter().filter_map(|f| {
        let Some(Default::Typed(default)) = default_of(f) else {
            return None;
        };
        let name = default_fn(f);
        let ty = f.inner;
        let value = typed(f, default);
        Some(quote! {
            #[doc(hidden)]
            fn #name() -> #ty { #value }
        })
    });
    let properties = if params.iter().any(|f| f.attrs.flatten.is_some()) {
        // A flattened group's properties stand among the node's own, in
        // order; their names are known only at run time, so checked there.
        let parts = params.iter().map(|f| match f.attrs.flatten {
            Some(_) => {
                let ty = f.inner;
                quote!(__props.extend(<#ty as ::nodekit::__private::Params>::properties()))
            }
            None => {
                let p = property(c, f);
                quote!(__props.push(#p))
            }
        });
        let struct_name = ident.to_string();
        quote! {
            let mut __props = ::std::vec::Vec::new();
            #(#parts;)*
            ::nodekit::__private::unique_names(#struct_name, __props)
        }
    } else {
        // Names were checked for duplicates at compile time.
        let parts = params.iter().map(|f| property(c, f));
        quote!(::std::vec![#(#parts),*])
    };
    let field_values = c.fields.iter().map(|f| {
        let ident = f.ident;
        let value = field_value(f);
        quote!(#ident: #value)
    });
    quote! {
        #[allow(non_snake_case)]
        impl #ident {
            #(#default_fns)*
        }

        #[automatically_derived]
        impl ::nodekit::__private::Params for #ident {
            fn properties() -> ::std::vec::Vec<::nodekit::__private::NodeProperty> {
                #properties
            }

            fn from_params_at(
                __values: &::nodekit::__private::Map<::std::string::String, ::nodekit::__private::Value>,
                __at: &::nodekit::__private::Location<'_>,
            ) -> ::nodekit::__private::Result<Self> {
                ::core::result::Result::Ok(#ident { #(#field_values),* })
            }
        }
    }
}

fn opt_str(s: Option<String>) -> TokenStream {
    opt_tokens(s.map(|s| quote!(#s)))
}

fn opt_tokens(t: Option<TokenStream>) -> TokenStream {
    match t {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    }
}

fn num_lit(n: f64) -> Literal {
    Literal::f64_suffixed(n)
}

/// `"dateTime"` → `PropertyType::DateTime` (the names are validated against `KINDS`).
fn kind_tokens(kind: &str) -> TokenStream {
    let variant = format_ident!("{}", case::title(kind).replace(' ', ""));
    quote!(::nodekit::__private::PropertyType::#variant)
}

fn property(c: &Container, f: &Field) -> TokenStream {
    let a = &f.attrs;
    let name = &f.name;
    let display_name = &f.display_name;
    let mut sets = Vec::new();
    let mut set = |key: &str, value: TokenStream| {
        let key = format_ident!("{key}");
        sets.push(quote!(#key: #value));
    };
    if let Some(d) = f.description() {
        set("description", quote!(::core::option::Option::Some(#d)));
    }
    match default_of(f) {
        Some(Default::Expression(text) | Default::JsonText(text)) => {
            set(
                "default",
                quote!(::core::option::Option::Some(::nodekit::__private::Value::from(#text))),
            );
        }
        Some(Default::Typed(_)) => {
            let fun = default_fn(f);
            set(
                "default",
                quote!(::core::option::Option::Some(::nodekit::__private::to_json(&Self::#fun()))),
            );
        }
        None => {}
    }
    if is_required(f) {
        set("required", quote!(true));
    }
    if let Some(kind) = &a.kind {
        let k = kind_tokens(&kind.value());
        set("kind", quote!(::core::option::Option::Some(#k)));
    }
    if let Some((_, options)) = &a.options {
        set("options", quote!(&[#(#options),*]));
    }
    if let Some(n) = &a.min {
        let v = num_lit(n.value);
        set("min", quote!(::core::option::Option::Some(#v)));
    }
    if let Some(n) = &a.max {
        let v = num_lit(n.value);
        set("max", quote!(::core::option::Option::Some(#v)));
    }
    if let Some(p) = &a.precision {
        set("precision", quote!(::core::option::Option::Some(#p)));
    }
    if a.password.is_some() {
        set("password", quote!(true));
    }
    if let Some(r) = &a.rows {
        set("rows", quote!(::core::option::Option::Some(#r)));
    }
    if let Some(p) = &a.placeholder {
        set("placeholder", quote!(::core::option::Option::Some(#p)));
    }
    if let Some(h) = &a.hint {
        set("hint", quote!(::core::option::Option::Some(#h)));
    }
    if a.no_data_expression.is_some() {
        set("no_data_expression", quote!(true));
    }
    if let Some(m) = &a.load_options_method {
        set(
            "load_options_method",
            quote!(::core::option::Option::Some(#m)),
        );
    }
    if let Some(d) = &a.display {
        let show = conditions(c, &d.show);
        let hide = conditions(c, &d.hide);
        set(
            "display_options",
            quote!(::core::option::Option::Some(
                ::nodekit::__private::display_options(
                    ::std::vec![#(#show),*],
                    ::std::vec![#(#hide),*],
                )
            )),
        );
    }
    if let Some(ai) = &f.from_ai {
        let key = opt_str(ai.key.as_ref().map(LitStr::value));
        let description = opt_str(ai.description.as_ref().map(LitStr::value));
        let ty = opt_str(ai.ty.as_ref().map(LitStr::value));
        let default = opt_tokens(ai.default.as_ref().map(|d| {
            let v = typed(f, d);
            quote!(::nodekit::__private::to_json(&#v))
        }));
        set(
            "from_ai",
            quote!(::core::option::Option::Some(::nodekit::__private::FromAiSpec {
                key: #key, description: #description, ty: #ty, default: #default,
            })),
        );
    }
    let ty = if let Some(nested) = nested(f) {
        set("nested", nested);
        quote!(())
    } else {
        let ty = f.inner;
        quote!(#ty)
    };
    quote! {
        ::nodekit::__private::property::<#ty>(::nodekit::__private::PropertySpec {
            #(#sets,)*
            ..::nodekit::__private::PropertySpec::new(#name, #display_name)
        })
    }
}

/// Marked required in the editor: asked for, or without any default.
fn is_required(f: &Field) -> bool {
    f.attrs.required.is_some()
        || (!f.optional && f.attrs.default.is_none() && f.from_ai.is_none() && !is_nested(f))
}

fn is_nested(f: &Field) -> bool {
    f.attrs.collection.is_some() || f.attrs.fixed_collection.is_some()
}

fn nested(f: &Field) -> Option<TokenStream> {
    if f.attrs.collection.is_some() {
        let ty = f.inner;
        Some(
            quote!(::nodekit::__private::Nested::Collection(<#ty as ::nodekit::__private::Params>::properties)),
        )
    } else if f.attrs.fixed_collection.is_some() {
        let ty = f.elem?;
        let group = fixed_group(f);
        Some(
            quote!(::nodekit::__private::Nested::FixedCollection(<#ty as ::nodekit::__private::Params>::properties, #group)),
        )
    } else {
        None
    }
}

/// A fixed collection's group name: the one given, else `values`.
fn fixed_group(f: &Field) -> String {
    f.attrs
        .fixed_collection_group
        .as_ref()
        .map_or_else(|| "values".to_owned(), LitStr::value)
}

fn conditions(c: &Container, conds: &[attr::Condition]) -> Vec<TokenStream> {
    conds
        .iter()
        .map(|cond| {
            if cond.key == "@version" {
                let values = cond
                    .values
                    .iter()
                    .filter_map(attr::number)
                    .map(|n| num_lit(n.value));
                return quote!((
                    "@version",
                    ::std::vec![#(::nodekit::__private::number(#values)),*]
                ));
            }
            let target = c
                .fields
                .iter()
                .filter(|f| f.attrs.flatten.is_none())
                .find(|f| f.name == cond.key || f.ident == cond.key.as_str());
            let Some(target) = target else {
                // A parameter of a flattened group: its type is not known
                // here, so the values are taken as written.
                let key = &cond.key;
                let values = &cond.values;
                return quote!((#key, ::std::vec![#(::nodekit::__private::to_json(&#values)),*]));
            };
            let key = &target.name;
            let values = cond.values.iter().map(|v| {
                let typed = typed(target, v);
                quote!(::nodekit::__private::to_json(&#typed))
            });
            quote!((#key, ::std::vec![#(#values),*]))
        })
        .collect()
}

/// The expression that reads field `f` in `from_params_at`.
fn field_value(f: &Field) -> TokenStream {
    let a = &f.attrs;
    if a.skip.is_some() {
        return quote!(::core::default::Default::default());
    }
    if a.flatten.is_some() {
        // The group reads its fields from the same parameters, at the same place.
        let ty = f.inner;
        return quote!(<#ty as ::nodekit::__private::Params>::from_params_at(__values, __at)?);
    }
    let name = &f.name;
    let p = quote!(::nodekit::__private);
    if a.fixed_collection.is_some() {
        let elem = f.elem.expect("validated: fixed collections are Vecs");
        let group = fixed_group(f);
        let read = quote!(#p::convert_fixed::<#elem>(&__v, &__at.field(#name), #group)?);
        let absent = if f.optional {
            quote!(::core::option::Option::None)
        } else {
            quote!(::std::vec::Vec::new())
        };
        return read_or(f, read, absent, true);
    }
    let ty = f.inner;
    // What an absent value becomes: a value, or an early return.
    let (read, absent): (TokenStream, Option<TokenStream>) = if a.collection.is_some() {
        let read = quote!(#p::convert_nested::<#ty>(&__v, &__at.field(#name))?);
        let empty = quote!(<#ty as ::nodekit::__private::Params>::from_params_at(&#p::Map::new(), &__at.field(#name))?);
        (read, (!f.optional).then_some(empty))
    } else {
        let json_text = is_json_text(f);
        let required = is_required(f);
        let min = opt_tokens(a.min.as_ref().map(|n| num_lit(n.value).into_token_stream()));
        let max = opt_tokens(a.max.as_ref().map(|n| num_lit(n.value).into_token_stream()));
        let options = a
            .options
            .as_ref()
            .map(|(_, o)| o.clone())
            .unwrap_or_default();
        let checks = quote!(&#p::Checks { min: #min, max: #max, options: &[#(#options),*], json_text: #json_text, required: #required });
        let absent = match (default_of(f), &f.from_ai) {
            // An absent `Option` parameter is `None`, whatever its default:
            // hidden by display_options, an option not added to a collection
            // (n8n sends only the ones added), or never given.
            _ if f.optional => None,
            (Some(Default::Expression(text)), _) => {
                Some(quote!(#p::expression_default::<#ty>(#text, __at, #name, #checks)?))
            }
            // A JSON default is read like the value n8n would send.
            (Some(Default::JsonText(text)), _) => {
                Some(quote!(#p::convert::<#ty>(&#p::Value::from(#text), __at, #name, #checks)?))
            }
            (Some(Default::Typed(_)), _) if json_text => {
                let fun = default_fn(f);
                Some(quote!(#p::convert::<#ty>(&#p::to_json(&Self::#fun()), __at, #name, #checks)?))
            }
            (Some(Default::Typed(_)), _) => {
                let fun = default_fn(f);
                Some(quote!(Self::#fun()))
            }
            (None, Some(_)) => {
                let err =
                    quote!(return ::core::result::Result::Err(#p::unresolved_from_ai(__at, #name)));
                return read_or(
                    f,
                    quote!(#p::convert::<#ty>(&__v, __at, #name, #checks)?),
                    err,
                    true,
                );
            }
            (None, None) => None,
        };
        (
            quote!(#p::convert::<#ty>(&__v, __at, #name, #checks)?),
            absent,
        )
    };
    match absent {
        Some(value) => read_or(f, read, value, false),
        None if f.optional => read_or(f, read, quote!(::core::option::Option::None), true),
        None => read_or(
            f,
            read,
            quote!(return ::core::result::Result::Err(#p::missing(#name, __at))),
            true,
        ),
    }
}

/// `match lookup(..) { Some(v) => read, None => absent }`, with `null` as
/// `None` for `Option` fields. `absent_is_final` when `absent` is already of
/// the field's type (or diverges) rather than of its inner type.
fn read_or(
    f: &Field,
    read: TokenStream,
    absent: TokenStream,
    absent_is_final: bool,
) -> TokenStream {
    let name = &f.name;
    let p = quote!(::nodekit::__private);
    if f.optional {
        let absent = if absent_is_final {
            absent
        } else {
            quote!(::core::option::Option::Some(#absent))
        };
        quote!(match #p::lookup(__values, #name, __at)? {
            ::core::option::Option::Some(__v) if __v.is_null() => ::core::option::Option::None,
            ::core::option::Option::Some(__v) => ::core::option::Option::Some(#read),
            ::core::option::Option::None => #absent,
        })
    } else {
        quote!(match #p::lookup(__values, #name, __at)? {
            ::core::option::Option::Some(__v) => #read,
            ::core::option::Option::None => #absent,
        })
    }
}

fn node_impl(attrs: &NodeAttrs, c: &Container, versions: &[f64]) -> TokenStream {
    let ident = c.ident;
    let name = attrs
        .name
        .as_ref()
        .map_or_else(|| case::lower_camel(&ident.to_string()), LitStr::value);
    let display_name = attrs
        .display_name
        .as_ref()
        .map_or_else(|| case::title(&ident.to_string()), LitStr::value);
    let description = attrs
        .description
        .as_ref()
        .map(LitStr::value)
        .or_else(|| c.doc.clone())
        .unwrap_or_default();
    let output = attrs
        .output
        .as_ref()
        .map_or_else(|| "main".to_owned(), ToString::to_string);
    let output = format_ident!("{}", case::title(&output).replace(' ', ""));
    let versions = versions.iter().map(|v| num_lit(*v));
    let default_version = opt_tokens(
        attrs
            .default_version
            .as_ref()
            .map(|v| num_lit(v.value).into_token_stream()),
    );
    let credentials = &attrs.credentials;
    let optional_credentials = &attrs.optional_credentials;
    let main_input = attrs.main_input.is_some();
    let group: Vec<LitStr> = if attrs.group.is_empty() {
        vec![LitStr::new("transform", Span::call_site())]
    } else {
        attrs.group.clone()
    };
    let icon = opt_str(attrs.icon.as_ref().map(LitStr::value));
    let subtitle = opt_str(attrs.subtitle.as_ref().map(LitStr::value));
    let docs = opt_str(attrs.documentation_url.as_ref().map(LitStr::value));
    let notice = opt_str(attrs.notice.as_ref().map(LitStr::value));
    let usable_as_tool = attrs.usable_as_tool.is_some();
    let package = match &attrs.package {
        Some(p) => quote!(#p),
        None => quote!(::core::env!("CARGO_PKG_NAME")),
    };
    quote! {
        #[automatically_derived]
        impl ::nodekit::__private::Node for #ident {
            const NAME: &'static str = #name;

            fn description() -> &'static ::nodekit::__private::NodeDescription {
                static DESCRIPTION: ::std::sync::OnceLock<::nodekit::__private::NodeDescription> =
                    ::std::sync::OnceLock::new();
                DESCRIPTION.get_or_init(|| {
                    ::nodekit::__private::NodeSpec {
                            name: #name,
                            display_name: #display_name,
                            description: #description,
                            kind: ::nodekit::__private::NodeKind::#output,
                            versions: &[#(#versions),*],
                            default_version: #default_version,
                            credentials: &[#(#credentials),*],
                            optional_credentials: &[#(#optional_credentials),*],
                            main_input: #main_input,
                            icon: #icon,
                            group: &[#(#group),*],
                            subtitle: #subtitle,
                            usable_as_tool: #usable_as_tool,
                            documentation_url: #docs,
                            notice: #notice,
                        }
                        .describe(<Self as ::nodekit::__private::Params>::properties())
                })
            }
        }

        /// Whichever run-time traits the node implements (none is fine).
        fn __nodekit_runtime() -> ::nodekit::__private::NodeRuntime {
            #[allow(unused_imports)]
            use ::nodekit::__private::ProbeFallback as _;
            let probe = ::nodekit::__private::Probe::<#ident>::new();
            ::nodekit::__private::NodeRuntime {
                supply: probe.supply_data().or(probe.tool_node()).or(probe.own_supply()),
                execute: probe.execute(),
            }
        }

        ::nodekit::__private::inventory::submit! {
            ::nodekit::__private::Registration::new(#package, <#ident as ::nodekit::__private::Node>::description)
                .with_runtime(__nodekit_runtime)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use quote::quote;

    /// The `::nodekit` paths of `out` that do not go through `__private`.
    pub(crate) fn outside_private(out: &str) -> Vec<String> {
        out.match_indices(":: nodekit ::")
            .map(|(i, _)| out[i..].chars().take(40).collect::<String>())
            .filter(|path| !path.starts_with(":: nodekit :: __private ::"))
            .collect()
    }

    /// Generated code names nothing of nodekit outside `__private`.
    #[test]
    fn generated_code_names_only_private_paths() {
        let node = super::ai_node(
            quote!(name = "find", output = tool, credentials = ["postgres"]),
            quote! {
                /// Finds.
                struct Find {
                    /// Query.
                    #[from_ai]
                    q: String,
                    /// Rows.
                    #[param(min = 1, max = 9)]
                    n: Option<u32>,
                    /// Extra.
                    #[param(collection)]
                    extra: Extra,
                }
            },
        )
        .to_string();
        let params = super::node_params(quote! {
            struct Extra {
                /// Field.
                #[param(default = "")]
                field: String,
            }
        })
        .to_string();
        for out in [node, params] {
            assert!(out.contains(":: nodekit :: __private ::"), "{out}");
            assert_eq!(outside_private(&out), Vec::<String>::new(), "{out}");
        }
    }

    /// Every mistake in one struct is reported at once, next to fallback impls.
    #[test]
    fn all_errors_are_reported_together() {
        let out = super::ai_node(
            quote!(name = "bad-name", outptu = tool),
            quote! {
                struct NoDocs {
                    #[param(min = 5, max = 1)]
                    a: u32,
                }
            },
        )
        .to_string();
        for expected in [
            "invalid node name `bad-name`",
            "unknown key `outptu` in `#[ai_node]`; did you mean `output`?",
            "a node needs a description",
            "`min = 5` is greater than `max = 1`",
            "unimplemented",
        ] {
            assert!(out.contains(expected), "missing {expected:?} in {out}");
        }
        assert!(
            !out.contains("inventory"),
            "no registration for a broken node"
        );
    }

    /// A default outside its parameter's bounds is an error; one on a
    /// bound is not, nor is any default when the bounds themselves are wrong
    /// (that is the error then).
    #[test]
    fn defaults_outside_the_bounds_are_refused() {
        let errors = |fields: proc_macro2::TokenStream| {
            let out = super::ai_node(
                quote!(output = tool),
                quote! {
                    /// Forecasts.
                    struct Forecast { #fields }
                },
            )
            .to_string();
            out.match_indices("compile_error")
                .map(|(i, _)| {
                    let rest = &out[i..];
                    let start = rest.find('"').map_or(0, |s| s + 1);
                    let end = rest[start..].find('"').map_or(0, |e| start + e);
                    rest[start..end].to_owned()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            errors(quote! {
                /// Days.
                #[param(default = 7, max = 6)]
                days: u32,
                /// Ratio.
                #[param(default = -0.5, min = 0.0)]
                ratio: f64,
                /// Ahead.
                #[from_ai(default = 10)]
                #[param(min = 1, max = 7)]
                ahead: u32,
            }),
            [
                "default `7` is greater than `max = 6` of parameter `days`",
                "default `-0.5` is less than `min = 0` of parameter `ratio`",
                "$fromAI default `10` is greater than `max = 7` of parameter `ahead`",
            ]
        );
        assert_eq!(
            errors(quote! {
                /// Days.
                #[param(default = 6, min = 1, max = 6)]
                days: u32,
                /// Ahead.
                #[from_ai(default = 1)]
                #[param(min = 1, max = 7)]
                ahead: u32,
            }),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(quote! {
                /// Size.
                #[param(default = 5, min = 10, max = 1)]
                size: u32,
            }),
            ["`min = 10` is greater than `max = 1`"]
        );
    }
}
