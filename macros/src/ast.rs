//! The macro input as nodekit sees it: a struct, its doc comment and its
//! fields with their parsed attributes and what their types are.

use syn::{Attribute, Expr, ExprLit, Fields, GenericArgument, Ident, Lit, PathArguments, Type};

use crate::attr::{self, FromAiAttrs, ParamAttrs};
use crate::case;
use crate::ctxt::Ctxt;

/// What a field type is, as far as the macro can tell from its tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prim {
    Str,
    Int {
        signed: bool,
    },
    Float,
    Bool,
    Json,
    /// Anything else: enums, `Vec`s, user types. The compiler checks those.
    Other,
}

impl Prim {
    fn of(ty: &Type) -> Prim {
        let Some(ident) = last_ident(ty) else {
            return Prim::Other;
        };
        match ident.to_string().as_str() {
            "String" | "str" => Prim::Str,
            "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => Prim::Int { signed: false },
            "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => Prim::Int { signed: true },
            "f32" | "f64" => Prim::Float,
            "bool" => Prim::Bool,
            "Value" | "Map" => Prim::Json,
            _ => Prim::Other,
        }
    }

    /// How the parameter type is called in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Prim::Str => "a string",
            Prim::Int { .. } | Prim::Float => "a number",
            Prim::Bool => "a boolean",
            Prim::Json => "JSON",
            Prim::Other => "a value of the field's type",
        }
    }

    pub fn is_number(self) -> bool {
        matches!(self, Prim::Int { .. } | Prim::Float)
    }
}

/// One field of the struct.
pub struct Field<'a> {
    pub ident: &'a Ident,
    /// `T` for `Option<T>`, else the declared type.
    pub inner: &'a Type,
    pub optional: bool,
    /// `T` for `Vec<T>` (after `Option`), used by fixed collections.
    pub elem: Option<&'a Type>,
    pub prim: Prim,
    pub doc: Option<String>,
    pub attrs: ParamAttrs,
    pub from_ai: Option<FromAiAttrs>,
    /// The n8n parameter name.
    pub name: String,
    pub display_name: String,
}

impl Field<'_> {
    pub fn description(&self) -> Option<String> {
        self.attrs
            .description
            .as_ref()
            .map(syn::LitStr::value)
            .or_else(|| self.doc.clone())
    }
}

/// The annotated struct.
pub struct Container<'a> {
    pub ident: &'a Ident,
    pub generic: bool,
    pub doc: Option<String>,
    pub fields: Vec<Field<'a>>,
}

impl<'a> Container<'a> {
    pub fn new(
        cx: &Ctxt,
        attrs: &'a [Attribute],
        ident: &'a Ident,
        generics: &'a syn::Generics,
        fields: &'a Fields,
    ) -> Self {
        if !generics.params.is_empty() {
            cx.error_spanned_by(generics, "nodekit parameter structs cannot be generic");
        }
        let fields = match fields {
            Fields::Named(named) => named.named.iter().map(|f| field(cx, f)).collect(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(unnamed) => {
                cx.error_spanned_by(
                    unnamed,
                    "nodekit parameters need named fields: each field is one parameter",
                );
                Vec::new()
            }
        };
        Container {
            ident,
            generic: !generics.params.is_empty(),
            doc: doc_comment(attrs),
            fields,
        }
    }
}

fn field<'a>(cx: &Ctxt, f: &'a syn::Field) -> Field<'a> {
    let ident = f.ident.as_ref().expect("named fields have identifiers");
    let attrs = attr::param_attrs(cx, &f.attrs);
    let mut from_ai = None;
    for a in &f.attrs {
        if a.path().is_ident("from_ai") {
            if from_ai.is_some() {
                cx.error_spanned_by(a, "duplicate `#[from_ai]` attribute");
            }
            from_ai = Some(attr::from_ai_attrs(cx, a));
        }
    }
    let (inner, optional) = match generic_arg(&f.ty, "Option") {
        Some(t) => (t, true),
        None => (&f.ty, false),
    };
    let name = attrs
        .name
        .as_ref()
        .map_or_else(|| case::lower_camel(&ident.to_string()), syn::LitStr::value);
    let display_name = attrs
        .display_name
        .as_ref()
        .map_or_else(|| case::title(&ident.to_string()), syn::LitStr::value);
    Field {
        ident,
        inner,
        optional,
        elem: generic_arg(inner, "Vec"),
        prim: Prim::of(inner),
        doc: doc_comment(&f.attrs),
        attrs,
        from_ai,
        name,
        display_name,
    }
}

/// `T` when `ty` is `wrapper<T>` (matched on the last path segment).
fn generic_arg<'a>(ty: &'a Type, wrapper: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    if seg.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

fn last_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| &s.ident),
        Type::Reference(r) => last_ident(&r.elem),
        _ => None,
    }
}

/// The doc comment as text: lines of a paragraph joined by spaces,
/// paragraphs by a blank line (clap's habit).
pub fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut paragraphs: Vec<String> = vec![String::new()];
    for line in lines.iter().flat_map(|l| l.split('\n')) {
        let line = line.trim();
        let current = paragraphs.last_mut().expect("starts with one paragraph");
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(String::new());
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    let text = paragraphs
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_comments_keep_paragraphs() {
        let item: syn::ItemStruct = syn::parse_quote! {
            /// First line
            /// continues here.
            ///
            ///   Second paragraph.
            struct S;
        };
        assert_eq!(
            doc_comment(&item.attrs).as_deref(),
            Some("First line continues here.\n\nSecond paragraph.")
        );
        let bare: syn::ItemStruct = syn::parse_quote!(
            struct S;
        );
        assert_eq!(doc_comment(&bare.attrs), None);
    }

    #[test]
    fn field_types_are_classified() {
        let ty = |t: syn::Type| Prim::of(&t);
        assert_eq!(ty(syn::parse_quote!(String)), Prim::Str);
        assert_eq!(ty(syn::parse_quote!(u32)), Prim::Int { signed: false });
        assert_eq!(
            ty(syn::parse_quote!(std::primitive::i64)),
            Prim::Int { signed: true }
        );
        assert_eq!(ty(syn::parse_quote!(f64)), Prim::Float);
        assert_eq!(ty(syn::parse_quote!(serde_json::Value)), Prim::Json);
        assert_eq!(ty(syn::parse_quote!(Vec<String>)), Prim::Other);
    }
}
