"""tool_grammar and schema_grammar: the same JSON as `chatfmt grammar` for the
same request (the CLI and the binding reach one C function), and the errors."""
import json
import os
import subprocess
import tempfile
import unittest

from support import REPO, chatfmt

BIN = os.environ.get("CHATFMT_BIN") or os.path.join(REPO, os.environ.get("BUILD", "build"), "chatfmt")
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"]}}},
         {"type": "function", "function": {"name": "get_time", "parameters": {
            "type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}}]


class Grammars(unittest.TestCase):
    def cli(self, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(TOOLS, f)
        try:
            r = subprocess.run([BIN, "grammar", *args, "--tools", f.name], capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        if r.returncode:
            self.skipTest(f"{BIN} grammar failed: {r.stderr}")
        return json.loads(r.stdout)

    def test_same_as_the_cli(self):
        for seed, choice, parallel in (("toolcall-qwen3", "auto", True), ("glm45", "required", False),
                                       ("command-a-reasoning", "get_time", True)):
            with self.subTest(seed=seed, choice=choice):
                got = chatfmt.tool_grammar(seed, TOOLS, tool_choice=choice, parallel_tool_calls=parallel)
                want = self.cli(seed, "--tool-choice", choice, "--parallel-tool-calls", str(parallel).lower())
                self.assertEqual(got, want)
                self.assertEqual(got["grammar_lazy"], choice == "auto")

    def test_none_and_errors(self):
        g = chatfmt.tool_grammar(format="hermes", tools=TOOLS, tool_choice="none")
        self.assertIsNone(g["grammar"])
        with self.assertRaises(chatfmt.UsageError):
            chatfmt.tool_grammar(format="hermes", tools=TOOLS, tool_choice="no_such_tool")
        with self.assertRaises(chatfmt.UsageError):
            chatfmt.tool_grammar(format="plain", tools=TOOLS)

    def test_schema_grammar(self):
        g = chatfmt.schema_grammar({"type": "integer", "minimum": 3, "maximum": 12})
        self.assertIn('value-of-schema ::= [3-9] | "1" [0-2]', g["grammar"])
        lark = chatfmt.schema_grammar({"type": "string", "pattern": "^(?=x)"}, "lark")
        self.assertTrue(lark["grammar"].startswith("start: "))
        self.assertTrue(any("not enforced" in w for w in lark["warnings"]))


if __name__ == "__main__":
    unittest.main()
