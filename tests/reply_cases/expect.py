"""expect.py — what the reply parser makes of a text field, shared by the
case generators of this folder (gen_cases.py, gen_engine_cases.py,
gen_family_cases.py): their expected messages follow the one rule
include/chatfmt.h states."""

WS = " \t\n\r\f\v"   # what the parser trims (ASCII whitespace)


def strip_or_none(s):
    """A text field as the parser gives it: a line break beside markup is
    layout, so leading whitespace goes up to its last line break and
    trailing whitespace from its first; spaces and tabs on the text's own
    line are the model's (include/chatfmt.h); whitespace alone is null.
    Text that starts the reply loses all its leading whitespace: such
    expectations are written without it."""
    s = s or ""
    if not s.strip(WS):
        return None
    body = s.strip(WS)
    head, tail = s[:s.index(body[0])], s[len(s.rstrip(WS)):]
    head = head[max(head.rfind("\n"), head.rfind("\r")) + 1:]
    cut = [k for k, ch in enumerate(tail) if ch in "\n\r"]
    return head + body + (tail[:cut[0]] if cut else tail)
