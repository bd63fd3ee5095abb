"""transformers' apply_chat_template around chatfmt's renderer: the options
beyond rendering text (batches, tokenize, return_dict, assistant masks),
and chatfmt.patch(tokenizer), which puts chatfmt behind an existing
tokenizer's apply_chat_template.

The rules follow transformers' PreTrainedTokenizerBase.apply_chat_template:
the text is rendered, then (tokenize=True) the tokenizer is called on it with
add_special_tokens=False and the padding/truncation/max_length/return_tensors
options plus tokenizer_kwargs; assistant masks come from the {% generation %}
character spans: for each span, the token holding its first character
through the token holding its last are marked (char_to_token), a span whose
start has no token (cut off by truncation) ends the marking of that row.
"""
import functools
import inspect

from . import errors

# transformers' own messages for arguments that cannot go together
CFM_AND_AGP = ("continue_final_message and add_generation_prompt are not compatible. Use continue_final_message "
               "when you want the model to continue the final message, and add_generation_prompt when you want "
               "to add a header that will prompt it to start a new assistant message instead.")
CFM_AND_MASK = "continue_final_message is not compatible with return_assistant_tokens_mask."
MASK_NEEDS_DICT = ("`return_assistant_tokens_mask=True` is incompatible with `return_dict=False`: the masks are "
                   "returned in the dict (`assistant_masks`)")
NO_TOKENIZER = ("tokenize=True needs a tokenizer: pass tokenizer=<an object called as transformers' tokenizers are, "
                "e.g. AutoTokenizer.from_pretrained(...)>, or call chatfmt.patch(tokenizer) and then "
                "tokenizer.apply_chat_template(...); tokenize=False returns the text")


def is_batch(conversation):
    """transformers' test: a list whose first item is a list (or has .messages)."""
    if not isinstance(conversation, (list, tuple)) or not conversation:
        return False
    first = conversation[0]
    return isinstance(first, (list, tuple)) or hasattr(first, "messages")


def apply(t, conversation, tools, documents, add_generation_prompt, continue_final_message, tokenize, padding,
          truncation, max_length, return_tensors, return_dict, return_assistant_tokens_mask, tokenizer_kwargs,
          tokenizer, kwargs):
    """Template.render's general path (see its docstring)."""
    if continue_final_message:
        if add_generation_prompt:
            raise errors.ValueError(CFM_AND_AGP)
        if return_assistant_tokens_mask:
            raise errors.ValueError(CFM_AND_MASK)
    if return_assistant_tokens_mask and not return_dict:
        raise errors.ValueError(MASK_NEEDS_DICT)
    if tokenize and tokenizer is None:
        raise errors.ValueError(NO_TOKENIZER)
    batched = is_batch(conversation)
    chats = [getattr(c, "messages", c) for c in conversation] if batched else [conversation]
    spans = None
    if return_dict:   # the text with its {% generation %} spans
        pairs = [t.render_with_spans(c, tools, documents, add_generation_prompt, continue_final_message, **kwargs)
                 for c in chats]
        texts = [p[0] for p in pairs]
        spans = [p[1] for p in pairs]
    elif batched:
        common = dict(kwargs, tools=tools, documents=documents, add_generation_prompt=add_generation_prompt,
                      continue_final_message=continue_final_message)
        texts = t.render_batch(chats, **common)
        if tokenize:   # a tokenizer takes text only: the first failure is raised
            for x in texts:
                if isinstance(x, BaseException):
                    raise x
    else:
        texts = [t._render_one(conversation, tools, documents, add_generation_prompt, continue_final_message,
                               kwargs)]
    if not tokenize:
        if not return_dict:
            return texts if batched else texts[0]
        if batched:
            return {"text": texts, "assistant_spans": spans}
        return {"text": texts[0], "assistant_spans": spans[0]}
    return tokenize_texts(tokenizer, texts if batched else texts[0], spans, batched, padding, truncation,
                          max_length, return_tensors, return_dict, return_assistant_tokens_mask, tokenizer_kwargs)


def tokenize_texts(tokenizer, text, spans, batched, padding, truncation, max_length, return_tensors, return_dict,
                   return_assistant_tokens_mask, tokenizer_kwargs):
    """The tokenizer call of transformers' apply_chat_template, and its masks."""
    call = dict(padding=padding, truncation=truncation, max_length=max_length, add_special_tokens=False,
                return_tensors=return_tensors)
    call.update(tokenizer_kwargs or {})
    # A tokenizer without char_to_token (not transformers' BatchEncoding)
    # answers through offsets, which are then taken out again.
    ask_offsets = return_assistant_tokens_mask and "return_offsets_mapping" not in call
    if ask_offsets:
        call["return_offsets_mapping"] = True
    out = tokenizer(text, **call)
    if not return_dict:
        return out["input_ids"]
    if return_assistant_tokens_mask:
        masks = assistant_masks(out, spans, batched, return_tensors)
        if ask_offsets and "offset_mapping" in out:
            del out["offset_mapping"]
        out["assistant_masks"] = masks
        if return_tensors:
            if callable(getattr(out, "convert_to_tensors", None)):
                out.convert_to_tensors(tensor_type=return_tensors)
            elif return_tensors == "np":
                import numpy
                out["assistant_masks"] = numpy.array(masks)
    return out


def _char_to_token_from_offsets(offsets):
    def char_to_token(i, char):
        for j, (start, end) in enumerate(offsets[i]):
            if start <= char < end:
                return j
        return None
    return char_to_token


def assistant_masks(out, spans, batched, return_tensors):
    """transformers' assistant masks: per row, 1 for the tokens from the one
    holding a span's first character to the one holding its last."""
    input_ids = out["input_ids"] if batched or return_tensors else [out["input_ids"]]
    char_to_token = getattr(out, "char_to_token", None)
    if not callable(char_to_token):
        offsets = out["offset_mapping"]
        if not (batched or return_tensors):
            offsets = [offsets]
        char_to_token = _char_to_token_from_offsets([[(int(a), int(b)) for a, b in row] for row in offsets])
    masks = []
    for i in range(len(input_ids)):
        mask = [0] * len(input_ids[i])
        for start_char, end_char in spans[i]:
            start = char_to_token(i, start_char)
            end = char_to_token(i, end_char - 1)
            if start is None:   # cut off (truncation): as transformers, the row's marking stops
                break
            for j in range(start, end + 1 if end else len(input_ids[i])):
                mask[j] = 1
        masks.append(mask)
    if not batched and not return_tensors:
        return masks[0]
    return masks


# ---- chatfmt.patch(tokenizer) -------------------------------------------------

class _Fallback(Exception):
    """chatfmt cannot answer this call as transformers would: the original does."""


_PATCHED = "_chatfmt_original_apply_chat_template"


def _defaults(method):
    """tokenize and return_dict defaults of the tokenizer's own method (they
    differ between transformers versions)."""
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        params = {}
    tokenize = params["tokenize"].default if "tokenize" in params else True
    return_dict = params["return_dict"].default if "return_dict" in params else False
    return bool(tokenize), bool(return_dict)


def _chat_template_text(tokenizer, chat_template, tools):
    """transformers' get_chat_template: the template text this call uses."""
    own = getattr(tokenizer, "chat_template", None)
    if isinstance(own, dict):
        if chat_template is not None and chat_template in own:
            return own[chat_template]
        if chat_template is None:
            if tools is not None and "tool_use" in own:
                return own["tool_use"]
            if "default" in own:
                return own["default"]
            raise _Fallback()   # (transformers raises its own error)
        return chat_template
    if chat_template is not None:
        return chat_template
    if not isinstance(own, str):
        raise _Fallback()
    return own


def patch(tokenizer):
    """Put chatfmt behind ``tokenizer.apply_chat_template`` (a transformers
    tokenizer, or any object with its interface): same signature and
    defaults, the tokenizer's ``chat_template`` (text or named dict) and
    special tokens, rendered by chatfmt; anything chatfmt cannot answer as
    transformers would (tools given as functions, a render error, options
    that do not go together, ...) goes to the original method, so a result
    is never different. Returns the tokenizer. :func:`unpatch` undoes it."""
    if getattr(tokenizer, _PATCHED, None) is not None:
        return tokenizer
    original = tokenizer.apply_chat_template
    tokenize_default, return_dict_default = _defaults(original)
    own = "apply_chat_template" in getattr(tokenizer, "__dict__", {})
    from .template import _by_text, _template_for

    def apply_chat_template(conversation, tools=None, documents=None, chat_template=None,
                            add_generation_prompt=False, continue_final_message=False, tokenize=tokenize_default,
                            padding=False, truncation=False, max_length=None, return_tensors=None,
                            return_dict=return_dict_default, return_assistant_tokens_mask=False,
                            tokenizer_kwargs=None, **kwargs):
        try:
            # transformers 5.x (return_dict=True by default) returns text when
            # tokenize=False; 4.x raises for return_dict without tokenize
            # (the original answers that).
            text_dict = return_dict and not tokenize and not return_dict_default
            if (continue_final_message and (add_generation_prompt or return_assistant_tokens_mask)) \
                    or (return_assistant_tokens_mask and not (tokenize and return_dict)) \
                    or text_dict or "messages" in kwargs \
                    or not isinstance(conversation, (list, tuple)) or not conversation \
                    or (tools is not None and not all(isinstance(x, dict) for x in tools)):
                raise _Fallback()
            text = _chat_template_text(tokenizer, chat_template, tools)
            template = _by_text.get(text) or _template_for(text)
            variables = dict(getattr(tokenizer, "special_tokens_map", None) or {})
            variables.update(kwargs)   # kwargs win over special tokens, as in transformers
            batched = is_batch(conversation)
            chats = [getattr(c, "messages", c) for c in conversation] if batched else [conversation]
            spans = None
            if return_assistant_tokens_mask:
                pairs = [template.render_with_spans(c, tools, documents, add_generation_prompt,
                                                    continue_final_message, **variables) for c in chats]
                texts = [p[0] for p in pairs]
                spans = [p[1] for p in pairs]
            elif batched:
                texts = template.render_batch(chats, tools=tools, documents=documents,
                                              add_generation_prompt=add_generation_prompt,
                                              continue_final_message=continue_final_message, **variables)
                if any(isinstance(x, BaseException) for x in texts):
                    raise _Fallback()
            else:
                texts = [template.render(conversation, tools, documents, add_generation_prompt=add_generation_prompt,
                                         continue_final_message=continue_final_message, **variables)]
        except (_Fallback, errors.ChatfmtError, TypeError, ValueError):
            return original(conversation, tools=tools, documents=documents, chat_template=chat_template,
                            add_generation_prompt=add_generation_prompt,
                            continue_final_message=continue_final_message, tokenize=tokenize, padding=padding,
                            truncation=truncation, max_length=max_length, return_tensors=return_tensors,
                            return_dict=return_dict, return_assistant_tokens_mask=return_assistant_tokens_mask,
                            tokenizer_kwargs=tokenizer_kwargs, **kwargs)
        if not tokenize:
            return texts if batched else texts[0]
        return tokenize_texts(tokenizer, texts if batched else texts[0], spans, batched, padding, truncation,
                              max_length, return_tensors, return_dict, return_assistant_tokens_mask,
                              tokenizer_kwargs)

    patched = apply_chat_template
    from .template import _native
    if _native is not None and hasattr(_native, "patched"):
        # the usual call answered in C, the others by the function above
        patched = _native.patched(tokenizer, apply_chat_template, tokenize_default)
    try:
        functools.update_wrapper(patched, getattr(original, "__func__", original))
    except AttributeError:
        pass
    patched.__wrapped__ = original
    tokenizer.apply_chat_template = patched
    setattr(tokenizer, _PATCHED, (original, own))
    return tokenizer


def unpatch(tokenizer):
    """Undo :func:`patch`: the tokenizer's own apply_chat_template again."""
    saved = getattr(tokenizer, _PATCHED, None)
    if saved is None:
        return tokenizer
    original, own = saved
    if own:
        tokenizer.apply_chat_template = original
    else:
        del tokenizer.apply_chat_template
    delattr(tokenizer, _PATCHED)
    return tokenizer
