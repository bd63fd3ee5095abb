"""chatfmt — render LLM chat templates byte-for-byte like Hugging Face
transformers' apply_chat_template, and parse model replies back into OpenAI
messages. A ctypes binding of libchatfmt (no build step, no dependencies).

    import chatfmt
    text = chatfmt.apply_chat_template("glm45", messages, add_generation_prompt=True)
    t = chatfmt.compile("path/to/tokenizer_config.json")   # once
    text = t.render(messages, tools=tools, enable_thinking=False)
    msg = chatfmt.parse_reply(reply, template=t, tools=tools)

The library is found from $CHATFMT_LIBRARY, the repository's build/ tree,
a copy bundled by pip, or the system (see chatfmt._lib).
"""
import builtins

from . import errors
from ._lib import path as library_path
from .errors import *  # noqa: F401,F403 - the exception classes are part of the API
from .replies import REPLY_FORMATS, ReplyStream, parse_reply
from .template import Template, apply_chat_template, builtin_names, compile
from ._transformers import patch, unpatch
from .dataset import FormatStats, format_jsonl

__version__ = "0.1.0"

# `from chatfmt import *` must not shadow builtins (compile, TypeError, KeyError, ...):
# those stay reachable as chatfmt.compile, chatfmt.KeyError.
__all__ = ["apply_chat_template", "Template", "parse_reply", "patch", "unpatch", "format_jsonl", "FormatStats", "ReplyStream", "builtin_names",
           "REPLY_FORMATS", "library_path", "errors"] + [n for n in errors.__all__ if not hasattr(builtins, n)]
