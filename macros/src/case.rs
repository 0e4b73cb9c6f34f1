//! Name conversions: Rust identifiers to n8n parameter names and labels.

/// `context_window` → `contextWindow`; `MemoryRedis` → `memoryRedis`.
pub fn lower_camel(ident: &str) -> String {
    let ident = ident.trim_start_matches("r#");
    let mut out = String::with_capacity(ident.len());
    let mut upper_next = false;
    for (i, c) in ident.chars().enumerate() {
        if c == '_' {
            upper_next = !out.is_empty();
        } else if upper_next {
            out.extend(c.to_uppercase());
            upper_next = false;
        } else if i == 0 {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `context_window` → `Context Window`; `MemoryRedis` → `Memory Redis`.
pub fn title(ident: &str) -> String {
    let ident = ident.trim_start_matches("r#");
    let mut out = String::with_capacity(ident.len() + 4);
    let mut prev: Option<char> = None;
    for c in ident.chars() {
        if c == '_' {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
        } else {
            let boundary = prev.is_some_and(|p| p.is_lowercase() && c.is_uppercase());
            if boundary {
                out.push(' ');
            }
            if out.is_empty() || out.ends_with(' ') {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
        }
        prev = Some(c);
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_and_title() {
        assert_eq!(lower_camel("context_window"), "contextWindow");
        assert_eq!(lower_camel("MemoryRedis"), "memoryRedis");
        assert_eq!(lower_camel("r#type"), "type");
        assert_eq!(title("context_window"), "Context Window");
        assert_eq!(title("MemoryRedis"), "Memory Redis");
        assert_eq!(title("ttl"), "Ttl");
    }
}
