//! Working memory: a markdown document per resource (user) that the agent
//! rewrites as it learns, and that goes to the model with every request.
//!
//! As in Mastra, an update replaces the whole document. An
//! update that is empty or is just the template with nothing filled in is
//! refused (it would erase what the agent knew), and so is one over
//! [`MAX_BYTES`]. The store serialises concurrent updates of one resource.

use serde_json::{Value, json};

use nodekit_core::error::{Error, Result};
use nodekit_core::tool::ToolDefinition;

/// Largest working memory (and template), in bytes.
pub const MAX_BYTES: usize = 16 * 1024;

/// The name of the tool the agent calls.
pub const TOOL_NAME: &str = "updateWorkingMemory";

/// Checks a custom template: text of at most [`MAX_BYTES`], no control
/// characters but newlines and tabs, and at least one markdown heading
/// (`# ...`) or field line (`- ...`), so the agent has a shape to fill.
pub fn check_template(template: &str) -> Result<()> {
    let bad = |expected: &str| Error::InvalidSetting {
        name: "working memory template".into(),
        value: nodekit_core::error::shorten(template, 60),
        expected: expected.into(),
    };
    if template.trim().is_empty() {
        return Err(bad("markdown with at least one heading or `- field` line"));
    }
    if template.len() > MAX_BYTES {
        return Err(bad(&format!("at most {MAX_BYTES} bytes")));
    }
    if has_control(template) {
        return Err(bad("text without control characters"));
    }
    let shaped = template.lines().map(str::trim_start).any(|l| {
        (l.starts_with('#') && l.trim_start_matches('#').starts_with(' ')) || l.starts_with("- ")
    });
    if !shaped {
        return Err(bad("markdown with at least one heading or `- field` line"));
    }
    Ok(())
}

/// Checks an update the agent sends against `template`.
pub fn check_update(template: &str, content: &str) -> std::result::Result<(), String> {
    if content.trim().is_empty() {
        return Err(
            "the working memory is empty; send the whole document with what you know filled in"
                .into(),
        );
    }
    if content.len() > MAX_BYTES {
        return Err(format!(
            "the working memory is {} bytes; it may have at most {MAX_BYTES}: keep what matters and shorten the rest",
            content.len()
        ));
    }
    if has_control(content) {
        return Err("the working memory contains control characters".into());
    }
    if normalized(content) == normalized(template) {
        return Err("this is the empty template: nothing would be remembered. Fill in what you learned, keeping what was there".into());
    }
    Ok(())
}

fn has_control(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
}

/// The text without whitespace differences, to compare with the template.
fn normalized(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The definition of the `updateWorkingMemory` tool.
pub fn tool_definition() -> ToolDefinition {
    ToolDefinition {
        name: TOOL_NAME.into(),
        description: "Update the working memory: what you know about the user and their \
            instance that should carry across conversations (name, preferences, goals, \
            workflows). Send the WHOLE document in the template's markdown shape; it \
            replaces the previous one, so keep what is still true."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "memory": {
                    "type": "string",
                    "description": "The complete working memory, as markdown."
                }
            },
            "required": ["memory"],
            "additionalProperties": false
        }),
    }
}

/// The `memory` argument of a tool call.
pub fn tool_argument(args: &Value) -> std::result::Result<&str, String> {
    args.get("memory").and_then(Value::as_str).ok_or_else(|| {
        "call updateWorkingMemory with {\"memory\": \"<the whole document>\"}".into()
    })
}

/// The `updateWorkingMemory` tool of `resource`: checks the update against
/// `template`, then replaces the stored document. A refused update is
/// answered to the model, which can retry.
pub fn tool(
    store: super::Store,
    resource: impl Into<String>,
    template: impl Into<String>,
) -> nodekit_core::tool::FnTool {
    let (resource, template) = (resource.into(), template.into());
    nodekit_core::tool::FnTool::new(tool_definition(), move |args: Value| {
        let (store, resource, template) = (store.clone(), resource.clone(), template.clone());
        async move {
            let content =
                match tool_argument(&args).and_then(|c| check_update(&template, c).map(|()| c)) {
                    Ok(content) => content,
                    Err(why) => return Ok(json!({"success": false, "error": why})),
                };
            let saved = store.set_working_memory(&resource, content, None).await?;
            Ok(json!({"success": true, "version": saved.version}))
        }
    })
}

/// The system text that shows the model its working memory.
pub fn system_text(content: &str) -> String {
    format!(
        "WORKING MEMORY: what you know about this user across conversations. When you \
         learn something that belongs here, call {TOOL_NAME} with the whole updated \
         document. Never store secrets or passwords.\n<working_memory>\n{}\n</working_memory>",
        content.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_TEMPLATE;

    #[test]
    fn templates_must_have_a_shape() {
        check_template(DEFAULT_TEMPLATE).unwrap();
        check_template("- **Name**:").unwrap();
        for bad in ["", "   \n", "just prose", "#nospace", "# Title\u{0}"] {
            assert!(check_template(bad).is_err(), "{bad:?}");
        }
        assert!(check_template(&format!("# T\n{}", "x".repeat(MAX_BYTES))).is_err());
    }

    #[test]
    fn the_empty_template_and_oversized_updates_are_refused() {
        assert!(check_update(DEFAULT_TEMPLATE, "").is_err());
        assert!(check_update(DEFAULT_TEMPLATE, DEFAULT_TEMPLATE).is_err());
        let reflowed = DEFAULT_TEMPLATE.replace('\n', "\n\n  ");
        assert!(check_update(DEFAULT_TEMPLATE, &reflowed).is_err());
        let filled = DEFAULT_TEMPLATE.replace("- **Name**:", "- **Name**: Ada");
        assert!(check_update(DEFAULT_TEMPLATE, &filled).is_ok());
        assert!(check_update(DEFAULT_TEMPLATE, &"x".repeat(MAX_BYTES + 1)).is_err());
    }
}
