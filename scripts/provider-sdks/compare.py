"""Compares nodekit's request bodies with the official SDKs' for two conversations.

Run by scripts/provider-sdks.sh, which installs the pinned SDKs in a scratch
virtual environment. For Anthropic (`anthropic`) and Gemini (`google-genai`),
the SDK sends each conversation of the crate's `request_body` example to a
recording server on 127.0.0.1; the body it sends must equal the one nodekit
prints, up to key order. Usage: compare.py ANTHROPIC_BODIES GEMINI_BODIES
(files holding nodekit's bodies as JSON, one a line).
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANTHROPIC_ANSWER = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2},
}
GEMINI_ANSWER = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "Sunny."}]}, "finishReason": "STOP"}],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
}

SEEN = []


class Recorder(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        SEEN.append((self.path, json.loads(self.rfile.read(length) or b"null")))
        answer = ANTHROPIC_ANSWER if self.path.startswith("/v1/messages") else GEMINI_ANSWER
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
SUMMARY_SCHEMA = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}


def anthropic_body(root):
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-example", base_url=root, max_retries=0)
    client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        # The 2.x SDK has no sampling arguments; the API field goes as it is.
        extra_body={"temperature": 0.5},
        system="Be brief.",
        stop_sequences=["END"],
        tool_choice={"type": "auto"},
        tools=[{"name": "get_weather", "description": "The weather in a city", "input_schema": WEATHER_SCHEMA}],
        messages=[
            {"role": "user", "content": "What is the weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Sunny, 21 °C"},
                {"type": "text", "text": "And what is in this picture?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            ]},
        ],
    )
    return SEEN[-1]


def anthropic_thinking_body(root):
    """Extended thinking with a signed block sent back, cache breakpoints on
    the system prompt and the tools, and structured output."""
    import anthropic

    client = anthropic.Anthropic(api_key="sk-ant-example", base_url=root, max_retries=0)
    ephemeral = {"type": "ephemeral"}
    client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=4096,
        thinking={"type": "enabled", "budget_tokens": 2048},
        system=[{"type": "text", "text": "Answer as JSON.", "cache_control": ephemeral}],
        stop_sequences=["END"],
        tool_choice={"type": "auto"},
        tools=[{"name": "get_weather", "description": "The weather in a city",
                "input_schema": WEATHER_SCHEMA, "cache_control": ephemeral}],
        output_config={"format": {"type": "json_schema",
                                  "schema": {**SUMMARY_SCHEMA, "additionalProperties": False}}},
        messages=[
            {"role": "user", "content": "What is the weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "The user wants Paris.", "signature": "EqQBCkYIBxgCKkA"},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Sunny, 21 °C"},
            ]},
        ],
    )
    return SEEN[-1]


def gemini_thinking_body(root):
    """Thinking, with the thought signature sent back on its call, and
    structured output."""
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key="AIza-example", http_options=types.HttpOptions(base_url=root, api_version="v1beta"))
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents=[
            types.Content(role="user", parts=[types.Part(text="What is the weather in Paris?")]),
            types.Content(role="model", parts=[
                types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}),
                           thought_signature=b"sig-g"),
            ]),
            types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(
                    name="get_weather", response={"result": "Sunny, 21 °C"})),
            ]),
        ],
        config=types.GenerateContentConfig(
            system_instruction="Answer as JSON.",
            thinking_config=types.ThinkingConfig(thinking_budget=1024, include_thoughts=True),
            response_mime_type="application/json",
            response_json_schema=SUMMARY_SCHEMA,
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                name="get_weather", description="The weather in a city",
                parameters_json_schema=WEATHER_SCHEMA)])],
        ),
    )
    return SEEN[-1]


def gemini_body(root):
    from google import genai
    from google.genai import types

    # nodekit calls v1beta, as LangChain (and so n8n) does; the SDK's
    # default is v1. The body is what is compared.
    client = genai.Client(
        api_key="AIza-example", http_options=types.HttpOptions(base_url=root, api_version="v1beta"))
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents=[
            types.Content(role="user", parts=[types.Part(text="What is the weather in Paris?")]),
            types.Content(role="model", parts=[
                types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})),
            ]),
            types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(
                    name="get_weather", response={"result": "Sunny, 21 °C"})),
                types.Part(text="And what is in this picture?"),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG\r\n\x1a\n")),
            ]),
        ],
        config=types.GenerateContentConfig(
            system_instruction="Be brief.",
            temperature=0.5,
            max_output_tokens=1024,
            top_p=0.9,
            stop_sequences=["END"],
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                name="get_weather", description="The weather in a city",
                parameters_json_schema=WEATHER_SCHEMA)])],
        ),
    )
    return SEEN[-1]


def camel(value):
    """`value` with every key in lowerCamelCase: the Gemini API reads JSON
    by proto3's mapping, which takes `mime_type` and `mimeType` alike."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def differences(ours, theirs, path="body"):
    """The places where two JSON values differ, key order aside."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        out = []
        for key in sorted(set(ours) | set(theirs)):
            if key not in ours:
                out.append(f"{path}.{key}: only the SDK sends it: {json.dumps(theirs[key])}")
            elif key not in theirs:
                out.append(f"{path}.{key}: only nodekit sends it: {json.dumps(ours[key])}")
            else:
                out.extend(differences(ours[key], theirs[key], f"{path}.{key}"))
        return out
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if ours == theirs else [f"{path}: nodekit {json.dumps(ours)}, SDK {json.dumps(theirs)}"]


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = f"http://127.0.0.1:{server.server_address[1]}"
    failed = False
    gemini_path = "/v1beta/models/gemini-2.5-flash:generateContent"
    for name, ours_file, sends, path, names in [
        ("anthropic", sys.argv[1], [anthropic_body, anthropic_thinking_body], "/v1/messages", lambda v: v),
        ("google-genai", sys.argv[2], [gemini_body, gemini_thinking_body], gemini_path, camel),
    ]:
        with open(ours_file, encoding="utf-8") as f:
            bodies = [json.loads(line) for line in f if line.strip()]
        if len(bodies) != len(sends):
            failed = True
            print(f"{name}: nodekit printed {len(bodies)} bodies for {len(sends)} conversations")
            continue
        for ours, send in zip(bodies, sends):
            seen_path, theirs = send(root)
            found = differences(names(ours), names(theirs))
            if not seen_path.startswith(path):
                found.append(f"path: the SDK posted to {seen_path}, nodekit posts to {path}")
            if found:
                failed = True
                print(f"{name}, {send.__name__}: the bodies differ")
                for line in found:
                    print(f"  {line}")
            else:
                print(f"{name}, {send.__name__}: the bodies are equal ({len(json.dumps(ours))} bytes)")
    server.shutdown()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
