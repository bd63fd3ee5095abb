// transformers' apply_chat_template options beyond the text, as the Python
// binding takes them (python/chatfmt/_transformers.py): tokenize with a
// tokenizer the caller passes, return_dict, assistant masks from the
// {% generation %} spans. None of them reaches the template, as in
// transformers, which consumes them.
//
// A tokenizer is duck-typed:
//   - encode(text, {add_special_tokens: false, ...tokenizer_kwargs}) returning
//     the ids (an array or typed array, as transformers.js's encode), or an
//     encoding object with `ids` (or `input_ids`, or getIds()) and, for
//     assistant masks, `offsets` (or `offset_mapping`, or getOffsets()) as
//     [start, end) pairs of JavaScript string indices (@huggingface/tokenizers'
//     and the Node tokenizers binding's Encoding); truncation and padding
//     are then applied here, with tokenizer.pad_token_id and padding_side;
//   - or callable, as transformers.js's tokenizers are:
//     tokenizer(text | texts, {add_special_tokens: false, padding, truncation,
//     max_length, return_tensor: false, ...tokenizer_kwargs}) returning
//     {input_ids, attention_mask[, offset_mapping]}.

// transformers' own messages for options that cannot go together
export const CFM_AND_AGP = "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message "
  + "when you want the model to continue the final message, and add_generation_prompt when you want "
  + "to add a header that will prompt it to start a new assistant message instead.";
export const CFM_AND_MASK = "continue_final_message is not compatible with return_assistant_tokens_mask.";
export const MASK_NEEDS_DICT = "`return_assistant_tokens_mask=True` is incompatible with `return_dict=False`: the masks are "
  + "returned in the dict (`assistant_masks`)";
export const NO_TOKENIZER = "tokenize: true needs a tokenizer: pass {tokenizer} (an object with encode(text, options), as "
  + "@huggingface/tokenizers' or transformers.js's, or a callable transformers.js tokenizer); "
  + "tokenize: false returns the text";

const OPTION_NAMES = ["tokenize", "padding", "truncation", "max_length", "return_tensors", "return_dict",
  "return_assistant_tokens_mask", "tokenizer_kwargs", "tokenizer"];

/** The options split into transformers' own (null when none is given) and
 * the rest (template variables and chat options). */
export function splitOptions(options) {
  const rest = { ...(options || {}) };
  let own = null;
  for (const name of OPTION_NAMES) {
    if (name in rest) {
      if (rest[name] !== undefined) (own ??= {})[name] = rest[name];
      delete rest[name];
    }
  }
  return { own, rest };
}

/** transformers' test for a batch: an array whose first item is an array (or has .messages). */
export function isBatch(conversation) {
  if (!Array.isArray(conversation) || !conversation.length) return false;
  const first = conversation[0];
  return Array.isArray(first) || (first !== null && typeof first === "object" && "messages" in first);
}

/**
 * apply_chat_template with transformers' options. render(messages, wantSpans)
 * returns {text, spans} (spans [start, end) in code points when wantSpans);
 * fail(kind, message) makes an error.
 */
export function applyWithOptions(own, conversation, chat, render, fail) {
  if (chat.continue_final_message) {
    if (chat.add_generation_prompt) throw fail("ValueError", CFM_AND_AGP);
    if (own.return_assistant_tokens_mask) throw fail("ValueError", CFM_AND_MASK);
  }
  if (own.return_assistant_tokens_mask && !own.return_dict) throw fail("ValueError", MASK_NEEDS_DICT);
  if (own.tokenize && !own.tokenizer) throw fail("ValueError", NO_TOKENIZER);
  if (own.return_tensors) {
    throw fail("ValueError", `return_tensors=${JSON.stringify(own.return_tensors)}: the JavaScript package returns arrays `
      + "(make tensors from input_ids yourself)");
  }
  const batched = isBatch(conversation);
  const chats = batched ? conversation.map((c) => (Array.isArray(c) ? c : c.messages)) : [conversation];
  const wantSpans = !!own.return_dict;
  const rendered = chats.map((c) => render(c, wantSpans));
  const texts = rendered.map((r) => r.text);
  const spans = rendered.map((r) => r.spans);
  if (!own.tokenize) {
    if (!own.return_dict) return batched ? texts : texts[0];
    return batched ? { text: texts, assistant_spans: spans } : { text: texts[0], assistant_spans: spans[0] };
  }
  const rows = encodeRows(own, texts, batched, fail);
  if (!own.return_dict) return batched ? rows.map((r) => r.input_ids) : rows[0].input_ids;
  const out = { input_ids: rows.map((r) => r.input_ids), attention_mask: rows.map((r) => r.attention_mask) };
  if (own.return_assistant_tokens_mask) {
    out.assistant_masks = rows.map((r, i) => {
      if (!r.offsets) {
        throw fail("ValueError", "return_assistant_tokens_mask needs token offsets, which this tokenizer does not "
          + "give (an encoding with `offsets`, as @huggingface/tokenizers', or `offset_mapping`)");
      }
      return assistantMask(r, texts[i], spans[i]);
    });
  }
  if (batched) return out;
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v[0]]));
}

function listOf(x) {
  if (x == null) return null;
  if (typeof x.tolist === "function") x = x.tolist();   // a transformers.js Tensor
  return Array.from(x, (v) => (typeof v === "bigint" ? Number(v) : v));
}

function pairsOf(x) {
  if (x == null) return null;
  if (typeof x.tolist === "function") x = x.tolist();
  return Array.from(x, (p) => [Number(p[0]), Number(p[1])]);
}

/** One encoding result of encode() as {input_ids, attention_mask, offsets}. */
function fromEncode(r, fail) {
  if (Array.isArray(r) || ArrayBuffer.isView(r)) return { input_ids: listOf(r), attention_mask: null, offsets: null };
  if (r && typeof r === "object") {
    const ids = r.ids ?? r.input_ids ?? (typeof r.getIds === "function" ? r.getIds() : null);
    if (ids != null) {
      const offsets = r.offsets ?? r.offset_mapping ?? (typeof r.getOffsets === "function" ? r.getOffsets() : null);
      const mask = r.attention_mask ?? (typeof r.getAttentionMask === "function" ? r.getAttentionMask() : null);
      return { input_ids: listOf(ids), attention_mask: listOf(mask), offsets: pairsOf(offsets) };
    }
  }
  throw fail("TypeError", "tokenizer.encode returned neither ids nor an encoding with ids");
}

/** The rows' encodings, truncated and padded as transformers' tokenizer call would. */
function encodeRows(own, texts, batched, fail) {
  const tok = own.tokenizer;
  const kwargs = own.tokenizer_kwargs || {};
  const padding = own.padding ?? false, truncation = own.truncation ?? false, maxLength = own.max_length ?? null;
  if (typeof tok.encode === "function") {
    const rows = texts.map((text) => fromEncode(tok.encode(text, { add_special_tokens: false, ...kwargs }), fail));
    for (const r of rows) {
      r.attention_mask ??= r.input_ids.map(() => 1);
      if (truncation && truncation !== "do_not_truncate" && maxLength != null && r.input_ids.length > maxLength) {
        r.input_ids.length = r.attention_mask.length = maxLength;
        if (r.offsets) r.offsets.length = maxLength;
      }
    }
    pad(rows, padding, maxLength, tok, fail);
    return rows;
  }
  if (typeof tok === "function") {
    const out = tok(batched ? texts : texts[0], {
      add_special_tokens: false, padding, truncation, max_length: maxLength, return_tensor: false, ...kwargs,
    });
    const ids = out?.input_ids;
    if (ids == null) throw fail("TypeError", "the tokenizer call returned no input_ids");
    const idRows = batched ? Array.from(ids) : [ids];
    const maskRows = out.attention_mask == null ? null : batched ? Array.from(out.attention_mask) : [out.attention_mask];
    const offRows = out.offset_mapping == null ? null : batched ? Array.from(out.offset_mapping) : [out.offset_mapping];
    return idRows.map((row, i) => {
      const input_ids = listOf(row);
      return {
        input_ids,
        attention_mask: maskRows ? listOf(maskRows[i]) : input_ids.map(() => 1),
        offsets: offRows ? pairsOf(offRows[i]) : null,
      };
    });
  }
  throw fail("TypeError", "tokenizer must have encode(text, options) or be callable (a transformers.js tokenizer)");
}

function pad(rows, padding, maxLength, tok, fail) {
  if (!padding || padding === "do_not_pad") return;
  const longest = Math.max(...rows.map((r) => r.input_ids.length));
  const target = padding === "max_length" ? maxLength ?? longest : longest;
  if (!rows.some((r) => r.input_ids.length < target)) return;
  const padId = tok.pad_token_id;
  if (padId == null) throw fail("ValueError", "padding needs tokenizer.pad_token_id");
  const left = tok.padding_side === "left";
  for (const r of rows) {
    const n = target - r.input_ids.length;
    if (n <= 0) continue;
    const fill = (v) => Array(n).fill(v);
    r.input_ids = left ? [...fill(padId), ...r.input_ids] : [...r.input_ids, ...fill(padId)];
    r.attention_mask = left ? [...fill(0), ...r.attention_mask] : [...r.attention_mask, ...fill(0)];
    if (r.offsets) r.offsets = left ? [...fill([0, 0]), ...r.offsets] : [...r.offsets, ...fill([0, 0])];
  }
}

/** transformers' rule: for each span, the tokens from the one holding its
 * first character to the one holding its last are 1; a span whose start has
 * no token (cut off) ends the row's marking; one whose end has none runs to
 * the row's end. Spans are in code points, offsets in string indices. */
function assistantMask(row, text, spans) {
  const mask = row.input_ids.map(() => 0);
  const unit = codePointToIndex(text);
  const tokenAt = (i) => {
    for (let j = 0; j < row.offsets.length; j++) {
      const [start, end] = row.offsets[j];
      if (start <= i && i < end) return j;
    }
    return null;
  };
  for (const [startChar, endChar] of spans) {
    const start = tokenAt(unit(startChar));
    if (start === null) break;
    const end = tokenAt(unit(endChar - 1));
    for (let j = start; j < (end === null ? mask.length : end + 1); j++) mask[j] = 1;
  }
  return mask;
}

/** Code point index -> string (UTF-16) index of text. */
function codePointToIndex(text) {
  if (!/[\uD800-\uDFFF]/.test(text)) return (i) => i;
  const at = [];
  for (let i = 0; i < text.length; i++) {
    at.push(i);
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) i++;
  }
  at.push(text.length);
  return (i) => (i < at.length ? at[i] : text.length + (i - at.length + 1));
}
