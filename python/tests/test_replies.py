"""parse_reply and ReplyStream on the committed reply cases
(tests/reply_cases/cases.jsonl: each case's expected message), and the
template-driven options against `chatfmt parse --template`."""
import json
import os
import subprocess
import tempfile
import unittest

from support import REPO, chatfmt

CASES = os.path.join(REPO, "tests", "reply_cases", "cases.jsonl")
BIN = os.environ.get("CHATFMT_BIN") or os.path.join(REPO, os.environ.get("BUILD", "build"), "chatfmt")


def load_cases():
    with open(CASES, encoding="utf-8") as f:
        for line in f:
            c = json.loads(line)
            c["bytes"] = bytes.fromhex(c["reply_hex"]) if "reply_hex" in c else c["reply"].encode("utf-8")
            yield c


class Replies(unittest.TestCase):
    def test_whole_replies(self):
        n = 0
        for c in load_cases():
            with self.subTest(case=c["name"]):
                got = chatfmt.parse_reply(c["bytes"], format=c["format"], tools=c["tools"], prompt=c["tail"],
                                          response_format="json" if c.get("json_response") else None)
                self.assertEqual(got, json.loads(c["expect"]))
                n += 1
        self.assertGreaterEqual(n, 50)

    def test_streams_reassemble_to_the_whole_message(self):
        for c in load_cases():
            if c["broken"]:
                continue
            for size in (1, 3, 64):
                with self.subTest(case=c["name"], chunk=size), \
                        chatfmt.ReplyStream(format=c["format"], tools=c["tools"], prompt=c["tail"],
                                            response_format={"type": "json_object"} if c.get("json_response")
                                            else None) as s:
                    data = c["bytes"]
                    deltas = []
                    for i in range(0, len(data), size):
                        deltas += s.feed(data[i:i + size])
                    deltas += s.finish()
                    self.assertTrue(all(isinstance(d, dict) for d in deltas))
                    self.assertEqual(s.message, json.loads(c["expect"]))

    def test_template_picks_format_and_reasoning_state(self):
        if subprocess.run([BIN, "parse", "--help"], capture_output=True).returncode:
            self.skipTest(f"{BIN} has no parse command")
        seeds = os.path.join(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"), "seeds")
        with tempfile.TemporaryDirectory() as d:
            for reply in ("<think>x</think>Done.", "Thinking here.\n</think>\n\nDone."):
                path = os.path.join(d, "reply.txt")
                with open(path, "w") as f:
                    f.write(reply)
                for seed, variables, args in (("glm45", {}, []),
                                              ("toolcall-qwen3", {"enable_thinking": False},
                                               ["-D", "enable_thinking=false"]),
                                              ("command-a-reasoning", {}, [])):
                    template = os.path.join(seeds, seed + ".jinja")
                    want = subprocess.run([BIN, "parse", "--template", template, *args, path],
                                          capture_output=True, check=True).stdout
                    with self.subTest(template=seed, reply=reply):
                        self.assertEqual(chatfmt.parse_reply(reply, template=template, **variables),
                                         json.loads(want))
                        self.assertEqual(chatfmt.parse_reply(reply, template=chatfmt.compile(template),
                                                             **variables), json.loads(want))

    def test_stream_misuse(self):
        s = chatfmt.ReplyStream(format="hermes")
        s.feed("hi")
        s.finish()
        with self.assertRaises(chatfmt.UsageError):
            s.feed("more")
        s.close()
        with self.assertRaises(chatfmt.UsageError):
            chatfmt.ReplyStream(format="nope")


if __name__ == "__main__":
    unittest.main()
