"""A stand-in for a transformers tokenizer (transformers is not installed
here): the call interface and apply_chat_template as transformers documents
them, so chatfmt's tokenize/return_dict/assistant-mask options and
chatfmt.patch can be checked against the reference path.

- __call__(text | [texts], add_special_tokens=True, padding=False,
  truncation=None, max_length=None, pad_to_multiple_of=None,
  return_tensors=None|"np", return_attention_mask=None,
  return_offsets_mapping=False, ...) returns an Encoding: a dict of
  input_ids, attention_mask (and offset_mapping) with char_to_token, as a
  fast tokenizer's BatchEncoding. Tokens are GPT-2-like pieces (special
  tokens whole, then ` ?word`, ` ?punctuation`, whitespace runs); ids are a
  stable hash, special tokens have their own small ids.
- apply_chat_template: transformers 5.x's algorithm with the reference
  renderer (shared/oracle/hf_render.py, Python Jinja2) for the text and
  transformers' AssistantTracker rule for the {% generation %} indices
  (tests/spans_reference.py).
"""
import copy
import os
import re
import zlib

from support import REPO, hf_render

try:
    import numpy
except ImportError:   # return_tensors="np" is then refused, as transformers would
    numpy = None

SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


class Encoding(dict):
    """transformers' BatchEncoding as far as apply_chat_template uses it."""

    def __init__(self, data, offsets, batched):
        super().__init__(data)
        self._offsets = offsets   # per row, always a list of (start, end)
        self._batched = batched

    def char_to_token(self, batch_or_char_index, char_index=None):
        batch, char = (0, batch_or_char_index) if char_index is None else (batch_or_char_index, char_index)
        for j, (start, end) in enumerate(self._offsets[batch]):
            if start <= char < end:
                return j
        return None

    def convert_to_tensors(self, tensor_type=None, prepend_batch_axis=False):
        if tensor_type is None:
            return self
        if tensor_type != "np" or numpy is None:
            raise ValueError(f"the stand-in tokenizer makes only numpy tensors, not {tensor_type!r}")
        for key, value in list(self.items()):
            if prepend_batch_axis:
                value = [value]
            try:
                self[key] = numpy.asarray(value)
            except ValueError as e:
                raise ValueError("Unable to create tensor, you should probably activate truncation and/or "
                                 "padding with 'padding=True' 'truncation=True' to have batched tensors with "
                                 "the same length.") from e
        return self


class PlainEncoding(dict):
    """An encoding without char_to_token (a tokenizer that is not transformers'):
    chatfmt then maps spans to tokens through offset_mapping."""


class StandInTokenizer:
    def __init__(self, chat_template=None, special_tokens=None, model_max_length=4096, padding_side="right",
                 truncation_side="right", plain_output=False):
        self.chat_template = chat_template
        self._special = {k: v for k, v in (special_tokens or {}).items() if isinstance(v, str)}
        self.model_max_length = model_max_length
        self.padding_side = padding_side
        self.truncation_side = truncation_side
        self.plain_output = plain_output
        self.calls = 0   # apply_chat_template calls of this (the original) method
        specials = sorted(set(self._special.values()), key=len, reverse=True)
        self._special_ids = {tok: i + 1 for i, tok in enumerate(sorted(set(self._special.values())))}
        alternatives = [re.escape(t) for t in specials] + [r" ?\w+", r" ?[^\w\s]+", r"\s+"]
        self._pieces = re.compile("|".join(alternatives))

    @property
    def special_tokens_map(self):
        return dict(self._special)

    @property
    def pad_token_id(self):
        pad = self._special.get("pad_token")
        return self._special_ids[pad] if pad else 0

    def _token_id(self, piece):
        if piece in self._special_ids:
            return self._special_ids[piece]
        return 1000 + zlib.crc32(piece.encode("utf-8")) % 200000

    def _encode(self, text, add_special_tokens):
        ids, offsets = [], []
        bos = self._special.get("bos_token")
        if add_special_tokens and bos:
            ids.append(self._special_ids[bos])
            offsets.append((0, 0))
        for m in self._pieces.finditer(text):
            ids.append(self._token_id(m.group()))
            offsets.append((m.start(), m.end()))
        return ids, offsets

    def __call__(self, text, text_pair=None, add_special_tokens=True, padding=False, truncation=None,
                 max_length=None, stride=0, is_split_into_words=False, pad_to_multiple_of=None, padding_side=None,
                 return_tensors=None, return_token_type_ids=None, return_attention_mask=None,
                 return_overflowing_tokens=False, return_special_tokens_mask=False, return_offsets_mapping=False,
                 return_length=False, verbose=True, **kwargs):
        if text_pair is not None or is_split_into_words or stride or return_overflowing_tokens:
            raise NotImplementedError("the stand-in tokenizer encodes single texts only")
        if kwargs:
            raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
        batched = isinstance(text, (list, tuple))
        texts = list(text) if batched else [text]
        rows = [self._encode(t, add_special_tokens) for t in texts]
        if truncation in (True, "longest_first", "only_first"):
            limit = max_length if max_length is not None else self.model_max_length
            cut = (lambda r: r[:limit]) if self.truncation_side == "right" else (lambda r: r[max(0, len(r) - limit):])
            rows = [(cut(ids), cut(offs)) for ids, offs in rows]
        target = None
        if padding in (True, "longest"):
            target = max(len(ids) for ids, _ in rows) if batched else None
        elif padding == "max_length":
            target = max_length if max_length is not None else self.model_max_length
        if target is not None and pad_to_multiple_of:
            target = -(-target // pad_to_multiple_of) * pad_to_multiple_of
        side = padding_side or self.padding_side
        data = {"input_ids": [], "attention_mask": []}
        if return_offsets_mapping:
            data["offset_mapping"] = []
        all_offsets = []
        for ids, offs in rows:
            mask = [1] * len(ids)
            ids, offs = list(ids), list(offs)
            if target is not None and len(ids) < target:
                n = target - len(ids)
                pad_ids, pad_mask, pad_offs = [self.pad_token_id] * n, [0] * n, [(0, 0)] * n
                if side == "right":
                    ids, mask, offs = ids + pad_ids, mask + pad_mask, offs + pad_offs
                else:
                    ids, mask, offs = pad_ids + ids, pad_mask + mask, pad_offs + offs
            data["input_ids"].append(ids)
            data["attention_mask"].append(mask)
            if return_offsets_mapping:
                data["offset_mapping"].append(offs)
            all_offsets.append(offs)
        if return_attention_mask is False:
            del data["attention_mask"]
        if not batched:
            data = {k: v[0] for k, v in data.items()}
        if self.plain_output:
            out = PlainEncoding(data)
            if return_tensors:
                raise ValueError("the plain stand-in returns lists only")
            return out
        out = Encoding(data, all_offsets, batched)
        if return_tensors:
            out.convert_to_tensors(return_tensors, prepend_batch_axis=not batched)
        return out

    # ---- transformers 5.x's apply_chat_template, with the reference renderer ----

    def get_chat_template(self, chat_template=None, tools=None):
        if isinstance(self.chat_template, dict):
            names = self.chat_template
            if chat_template is not None and chat_template in names:
                return names[chat_template]
            if chat_template is None:
                if tools is not None and "tool_use" in names:
                    return names["tool_use"]
                if "default" in names:
                    return names["default"]
                raise ValueError("This model has multiple chat templates with no default specified!")
            return chat_template
        if chat_template is not None:
            return chat_template
        if self.chat_template is None:
            raise ValueError("Cannot use chat template functions because tokenizer.chat_template is not set")
        return self.chat_template

    def apply_chat_template(self, conversation, tools=None, documents=None, chat_template=None,
                            add_generation_prompt=False, continue_final_message=False, tokenize=True, padding=False,
                            truncation=False, max_length=None, return_tensors=None, return_dict=True,
                            return_assistant_tokens_mask=False, tokenizer_kwargs=None, **kwargs):
        self.calls += 1
        if not tokenize:
            return_dict = False   # (transformers 5.x: dicts come from the tokenizer only)
        if return_assistant_tokens_mask and not return_dict:
            raise ValueError("`return_assistant_tokens_mask=True` requires `return_dict=True`")
        tokenizer_kwargs = tokenizer_kwargs or {}
        text = self.get_chat_template(chat_template, tools)
        if tools is not None and not all(isinstance(t, dict) for t in tools):
            raise ValueError("the stand-in takes tools as JSON schemas (dicts) only")
        batched = isinstance(conversation, (list, tuple)) and bool(conversation) and \
            (isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages"))
        chats = list(conversation) if batched else [conversation]
        if continue_final_message:
            if add_generation_prompt:
                raise ValueError("continue_final_message and add_generation_prompt are not compatible.")
            if return_assistant_tokens_mask:
                raise ValueError("continue_final_message is not compatible with return_assistant_tokens_mask.")
        variables = {**self.special_tokens_map, **kwargs}
        texts, indices = [], []
        for chat in chats:
            chat = getattr(chat, "messages", chat)
            ctx = dict(variables, messages=chat, tools=tools, documents=documents,
                       add_generation_prompt=add_generation_prompt, continue_final_message=continue_final_message)
            if return_assistant_tokens_mask:
                rendered, spans = reference_spans(text, ctx)
            else:
                rendered, spans = hf_render.render(text, ctx), None
            texts.append(rendered)
            indices.append(spans)
        if not tokenize:
            return texts if batched else texts[0]
        out = self(texts if batched else texts[0], padding=padding, truncation=truncation, max_length=max_length,
                   add_special_tokens=False, return_tensors=return_tensors, **tokenizer_kwargs)
        if not return_dict:
            return out["input_ids"]
        if return_assistant_tokens_mask:
            input_ids = out["input_ids"] if batched or return_tensors else [out["input_ids"]]
            masks = []
            for i in range(len(input_ids)):
                mask = [0] * len(input_ids[i])
                for start_char, end_char in indices[i]:
                    start = out.char_to_token(i, start_char)
                    end = out.char_to_token(i, end_char - 1)
                    if start is None:
                        break
                    for j in range(start, end + 1 if end else len(input_ids[i])):
                        mask[j] = 1
                masks.append(mask)
            out["assistant_masks"] = masks if batched or return_tensors else masks[0]
            if return_tensors:
                out.convert_to_tensors(return_tensors)
        return out


_tracked = {}


def reference_spans(text, ctx):
    """The reference text and transformers' {% generation %} indices for it
    (tests/spans_reference.py's tracker, rendered through Jinja2)."""
    if text not in _tracked:
        _tracked[text] = _tracked_template(text)
    template, tracker = _tracked[text]
    ctx = copy.deepcopy(ctx)
    messages = ctx.pop("messages")
    tools = ctx.pop("tools", None)
    documents = ctx.pop("documents", None)
    agp = ctx.pop("add_generation_prompt", False)
    ctx.pop("continue_final_message", None)
    tracker.blocks, tracker.spans = [], []
    for chunk in template.generate(messages=messages, tools=tools, documents=documents, add_generation_prompt=agp,
                                   **ctx):
        tracker.blocks.append(chunk)
    return "".join(tracker.blocks), list(tracker.spans)


def _tracked_template(text):
    import sys
    sys.path.insert(0, os.path.join(REPO, "tests"))
    import jinja2
    import spans_reference
    env = hf_render.compile_template(text).environment
    tracked = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[spans_reference.TrackingAssistantTracker, jinja2.ext.loopcontrols])
    tracked.filters["tojson"] = env.filters["tojson"]
    tracked.globals.update({k: env.globals[k] for k in ("raise_exception", "strftime_now")})
    tracker = next(e for e in tracked.extensions.values() if isinstance(e, spans_reference.TrackingAssistantTracker))
    return tracked.from_string(text), tracker
