"""The binding against the reference renderer: seeds x conversations (every
case identical, errors of the same class) and corpus x conversations (at
least 99.5% identical, both failing counts as agreeing, as tests/parity.py)."""
import unittest

from support import SHARED, chatfmt, chatfmt_outcome, conversations, hf_render, oracle_outcome, templates


def run(template_dir):
    rows = []
    convs = conversations()
    for tname, text in templates(template_dir):
        for cname, ctx in convs:
            want = oracle_outcome(text, ctx)
            got = chatfmt_outcome(lambda: chatfmt.apply_chat_template(text, **ctx))
            rows.append((f"{tname}|{cname}", want, got))
    return rows


@unittest.skipIf(hf_render is None, f"reference renderer not importable from {SHARED}/oracle")
class OracleTest(unittest.TestCase):
    def test_seeds_all_identical(self):
        rows = run("seeds")
        bad = [(case, want, got) for case, want, got in rows if want != got]
        print(f"\nseeds x conversations: {len(rows) - len(bad)}/{len(rows)} identical")
        self.assertGreaterEqual(len(rows), 75)
        self.assertEqual(bad, [])

    def test_corpus_at_least_99_5_percent(self):
        rows = run("corpus/templates")
        agree = [(w[0] == "error" and g[0] == "error") or w == g for _, w, g in rows]
        ratio = sum(agree) / len(rows)
        print(f"\ncorpus x conversations: {sum(agree)}/{len(rows)} = {ratio:.4f}")
        for (case, want, got), ok in zip(rows, agree):
            if not ok:
                print("  differs:", case, want[0], got[0], str(got[1])[:80])
        self.assertGreaterEqual(len(rows), 2000)
        self.assertGreaterEqual(ratio, 0.995)


if __name__ == "__main__":
    unittest.main()
