//! `#[chat_history(namespace = [...])]`: parse, validate and expand.

use proc_macro2::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{LitStr, Token};

use crate::ctxt::Ctxt;
use nodekit_rules::closest;

/// Field names whose values are treated as secrets in the generated `Debug`.
const SECRET_WORDS: &[&str] = &[
    "password",
    "secret",
    "token",
    "api_key",
    "apikey",
    "credential",
    "auth",
];

/// Parsed arguments.
struct Args {
    namespace: Option<(proc_macro2::Span, Vec<LitStr>)>,
}

fn parse_args(cx: &Ctxt, args: TokenStream) -> Args {
    let mut out = Args { namespace: None };
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("namespace") {
            if out.namespace.is_some() {
                cx.error_spanned_by(&meta.path, "duplicate key `namespace` in `#[chat_history]`");
            }
            let value = meta.value()?;
            let content;
            syn::bracketed!(content in value);
            let parts = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
            out.namespace = Some((
                meta.path
                    .get_ident()
                    .map_or_else(proc_macro2::Span::call_site, |i| i.span()),
                parts.into_iter().collect(),
            ));
            Ok(())
        } else {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let hint = closest(&key, &["namespace"])
                .map_or(String::new(), |b| format!("; did you mean `{b}`?"));
            cx.error_spanned_by(
                &meta.path,
                format!("unknown key `{key}` in `#[chat_history]`{hint}"),
            );
            // Consume the value so that parsing goes on with one error, not two.
            if meta.input.peek(Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        }
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    out
}

/// `#[chat_history(...)]` on a struct.
pub fn chat_history(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item: syn::ItemStruct = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let error =
                syn::Error::new(e.span(), "#[chat_history] goes on a struct").to_compile_error();
            return quote!(#item #error);
        }
    };
    let cx = Ctxt::default();
    let args = parse_args(&cx, args);
    let namespace = match &args.namespace {
        None => {
            cx.error_spanned_by(
                &item.ident,
                "a chat history needs a namespace: `#[chat_history(namespace = [\"my_package\", \"memory\", \"store\"])]`",
            );
            Vec::new()
        }
        Some((span, parts)) => {
            if parts.is_empty() {
                cx.syn_error(syn::Error::new(*span, "the namespace is empty: give at least one part, e.g. `[\"my_package\", \"memory\"]`"));
            }
            for p in parts {
                let v = p.value();
                if v.is_empty()
                    || !v
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    cx.error_spanned_by(
                        p,
                        format!("invalid namespace part {v:?}: use letters, digits, `_` and `-`"),
                    );
                }
            }
            parts.iter().map(LitStr::value).collect()
        }
    };
    // Which fields the generated Debug hides, before the `#[secret]` markers are removed.
    let fields: Vec<(syn::Member, String, bool)> = item
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let member = f
                .ident
                .clone()
                .map_or(syn::Member::Unnamed(i.into()), syn::Member::Named);
            let name = f.ident.as_ref().map_or(i.to_string(), ToString::to_string);
            let marked = f.attrs.iter().any(|a| a.path().is_ident("secret"));
            let lower = name.to_ascii_lowercase();
            (
                member,
                name,
                marked || SECRET_WORDS.iter().any(|w| lower.contains(w)),
            )
        })
        .collect();
    for f in item.fields.iter_mut() {
        f.attrs.retain(|a| !a.path().is_ident("secret"));
    }
    let errors = cx.check().err().map(|e| e.to_compile_error());
    let ident = &item.ident;
    if errors.is_some() {
        return quote!(#item #errors);
    }
    let name = ident.to_string();
    let debug_fields = fields.iter().map(|(member, name, secret)| {
        if *secret {
            quote!(.field(#name, &"***"))
        } else {
            quote!(.field(#name, &::nodekit::__private::DebugField(&self.#member).shown()))
        }
    });
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let generic = !item.generics.params.is_empty();
    // Registration needs a concrete type; generic histories are not registered.
    let register = (!generic).then(|| {
        quote! {
            ::nodekit::__private::inventory::submit! {
                ::nodekit::history::HistoryRegistration { namespace: &[#(#namespace),*], type_name: #name }
            }
            // Fails to compile, with a clear note, if the struct does not implement the trait.
            const _: fn() = || {
                fn implements_chat_history<T: ::nodekit::history::ChatHistory>() {}
                implements_chat_history::<#ident>();
            };
        }
    });
    quote! {
        #item

        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::nodekit::history::HistoryNamespace for #ident #ty_generics #where_clause {
                const NAMESPACE: &'static [&'static str] = &[#(#namespace),*];
            }

            /// Shows the namespace and the fields; secrets are `***`.
            #[automatically_derived]
            impl #impl_generics ::core::fmt::Debug for #ident #ty_generics #where_clause {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    #[allow(unused_imports)]
                    use ::nodekit::__private::DebugFieldFallback as _;
                    f.debug_struct(#name)
                        .field("namespace", &<Self as ::nodekit::history::HistoryNamespace>::NAMESPACE)
                        #(#debug_fields)*
                        .finish()
                }
            }

            #register
        };
    }
}
