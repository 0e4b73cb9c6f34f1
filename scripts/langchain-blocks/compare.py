"""Compares the messages nodekit's clients send for a stored history with
those LangChain's integrations send for it (scripts/langchain-blocks.sh).

Two differences are nodekit's on purpose, and are shown, not failed:
- to Anthropic, nodekit sends a document's file name as its `title`
  (@langchain/anthropic leaves it out);
- to OpenAI, nodekit leaves Anthropic's `citations` off the text
  (@langchain/openai sends them, and OpenAI refuses fields it does not know).
"""
import json
import sys

nodekit = json.load(open(sys.argv[1]))
langchain = json.load(open(sys.argv[2]))
failed = False


def blocks(messages, key):
    for m in messages:
        content = m.get(key)
        if isinstance(content, list):
            yield from content


for provider, key in [("anthropic", "content"), ("openai", "content"), ("gemini", "parts")]:
    ours, theirs = nodekit[provider], langchain[provider]
    if isinstance(theirs, dict) and "error" in theirs:
        print(f"{provider}: LangChain failed: {theirs['error']}")
        failed = True
        continue
    notes = []
    if provider == "anthropic":
        for b in blocks(ours, key):
            if b.get("type") == "document" and "title" in b:
                notes.append(f"nodekit names the document `{b.pop('title')}`")
    if provider == "openai":
        for b in blocks(theirs, key):
            if b.get("type") == "text" and "citations" in b:
                b.pop("citations")
                notes.append("LangChain sends Anthropic's citations to OpenAI")
    if ours == theirs:
        print(f"{provider}: equal" + "".join(f"; {n}" for n in notes))
    else:
        failed = True
        print(f"{provider}: DIFFERENT")
        print("  nodekit:  ", json.dumps(ours))
        print("  LangChain:", json.dumps(theirs))
sys.exit(1 if failed else 0)
