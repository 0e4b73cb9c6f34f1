"""OpenAI's official Python client against an OpenAI-compatible base URL
(`nodekit serve`, or a LiteLLM proxy in front of it): a whole answer, then a
streamed one in the same session, which must remember the first question.
The session goes both in `user` and in the X-Session-Id header (a LiteLLM
proxy forwards the header, if told to, but drops `user`). With --check-key,
a wrong key must be refused with 401.
Usage: python clients.py BASE_URL API_KEY MODEL LABEL [--check-key]"""
import sys
import uuid

import openai

base, key, model, label = sys.argv[1:5]
check_key = "--check-key" in sys.argv[5:]
client = openai.OpenAI(base_url=base, api_key=key, max_retries=0, timeout=60)
session = f"py-{uuid.uuid4().hex[:12]}"
failed = False


def check(ok, what):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {label}: {what}")
    failed |= not ok


named = {"user": session, "extra_headers": {"X-Session-Id": session}}
whole = client.chat.completions.create(
    model=model, messages=[{"role": "user", "content": "I am Ada."}], **named
)
text = whole.choices[0].message.content
check("You asked: I am Ada." in text and "(0 earlier" in text, f"a whole answer: {text!r}")
check(whole.choices[0].finish_reason == "stop", "finish_reason stop")

stream = client.chat.completions.create(
    model=model, stream=True, messages=[{"role": "user", "content": "Who am I?"}], **named
)
pieces = [c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content]
text = "".join(pieces)
check(len(pieces) >= 3, f"a streamed answer in {len(pieces)} pieces")
check("You asked: Who am I?" in text and "(1 earlier" in text, f"the session remembered: {text!r}")

if check_key:
    try:
        openai.OpenAI(base_url=base, api_key="wrong-key", max_retries=0).chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hi"}]
        )
        check(False, "a wrong key is refused")
    except openai.AuthenticationError:
        check(True, "a wrong key is refused")
sys.exit(1 if failed else 0)
