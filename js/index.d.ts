// Types of the chatfmt package (index.js).

/** A template variable: JSON-like data. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };

export interface Message {
  role: string;
  content?: Json;
  [key: string]: Json | undefined;
}

/** Safety limits of one render (chatfmt.h: cf_limits); 0 or absent means the default. */
export interface Limits {
  max_steps?: number;
  max_recursion?: number;
  max_parse_depth?: number;
  max_output?: number;
  max_string?: number;
  max_items?: number;
  max_memory?: number;
  max_range?: number;
  max_json_depth?: number;
  max_json_bytes?: number;
}

export interface TemplateOptions {
  /** A named template of a tokenizer_config.json or GGUF ("default", "tool_use", ...). */
  templateName?: string | null;
  /** Undo web-copy damage (line numbers, table rows). Default: on for loaded sources, off for text. */
  repair?: boolean;
  limits?: Limits | null;
  /** "YYYY-MM-DDTHH:MM:SS": pins strftime_now (else the local time). */
  now?: string | null;
  /** Adapt each request to what the template can render (off: exactly transformers). */
  polyfill?: boolean;
  /** The name used in error messages. */
  name?: string | null;
}

/** apply_chat_template's keyword arguments; any other key is a template variable. */
export interface ChatOptions {
  tools?: Json[] | null;
  documents?: Json[] | null;
  add_generation_prompt?: boolean;
  continue_final_message?: boolean | string;
  [variable: string]: Json | undefined;
}

/** A tokenizer, duck-typed (js/tokenize.js): encode(text, {add_special_tokens}) returning
 * ids or an encoding with ids (and offsets, for assistant masks), or a callable
 * transformers.js tokenizer. */
export type Tokenizer =
  | { encode(text: string, options: { add_special_tokens: boolean; [k: string]: unknown }): unknown; pad_token_id?: number | null; padding_side?: "left" | "right" }
  | ((text: string | string[], options: Record<string, unknown>) => { input_ids: unknown; attention_mask?: unknown; offset_mapping?: unknown });

/** transformers' apply_chat_template options beyond the text; none reaches the template. */
export interface TransformersOptions {
  tokenize?: boolean;
  tokenizer?: Tokenizer | null;
  return_dict?: boolean;
  return_assistant_tokens_mask?: boolean;
  padding?: boolean | "longest" | "max_length" | "do_not_pad";
  truncation?: boolean | string;
  max_length?: number | null;
  tokenizer_kwargs?: Record<string, unknown> | null;
}

/** apply_chat_template's keyword arguments with transformers' options. */
export interface TransformersChatOptions extends TransformersOptions {
  tools?: Json[] | null;
  documents?: Json[] | null;
  add_generation_prompt?: boolean;
  continue_final_message?: boolean | string;
  [variable: string]: Json | Tokenizer | Record<string, unknown> | undefined;
}

/** What apply_chat_template returns with return_dict (per conversation, or arrays of them for a batch). */
export interface ChatDict {
  text?: string | string[];
  assistant_spans?: [number, number][] | [number, number][][];
  input_ids?: number[] | number[][];
  attention_mask?: number[] | number[][];
  assistant_masks?: number[] | number[][];
}

/** Objects holding memory in the WebAssembly heap: free it with dispose() or `using`. */
export interface Disposable {
  dispose(): void;
  readonly disposed: boolean;
  [Symbol.dispose](): void;
}

export class Template implements Disposable {
  /** Template text, a built-in name, or the bytes of a template file, tokenizer_config.json or GGUF. */
  constructor(template: string | Uint8Array | ArrayBuffer, options?: TemplateOptions);
  /** The (possibly repaired) template text. */
  readonly source: string;
  /** "text", "file", "tokenizer_config", "gguf" or "builtin". */
  readonly kind: string;
  name: string | null;
  /** Notes from loading ("repaired: removed line-number prefixes from 106 lines"). */
  readonly warnings: string[];
  /** "glm45", "hermes", "command-a" or "plain". */
  readonly replyFormat: string;
  /** Renders with exactly these variables (as @huggingface/jinja's Template.render). */
  render(variables?: Record<string, Json | undefined>): string;
  /** transformers' apply_chat_template(messages, tokenize=False, ...). */
  applyChatTemplate(messages: Message[], options?: ChatOptions): string;
  applyChatTemplate(messages: Message[][], options?: ChatOptions): string[];
  /** With transformers' options: ids (tokenize), or a dict (return_dict). */
  applyChatTemplate(messages: Message[] | Message[][], options: TransformersChatOptions): string | string[] | number[] | number[][] | ChatDict;
  /** The text and its {% generation %} spans ([start, end) in code points). */
  renderWithSpans(messages: Message[], options?: ChatOptions): { text: string; spans: [number, number][] };
  /** Variables as JSON text (an object): integers beyond 2^53 and 1.0 vs 1 survive.
   * chat: as applyChatTemplate (the object holds messages and the keyword arguments), else as render. */
  renderJSON(json: string, options?: { chat?: boolean }): string;
  /** The text of the template used for a request with tools (a tokenizer_config's tool_use) or without. */
  sourceFor(tools: Json[] | null | undefined): string;
  /** The reply format of a request with (or without) tools, found by probing renders. */
  replyFormatFor(tools: Json[] | null | undefined): string;
  caps(): Caps;
  dispose(): void;
  readonly disposed: boolean;
  [Symbol.dispose](): void;
}

/** What a template supports, found by probing renders (chatfmt.h: cf_caps_json). */
export interface Caps {
  supports_system_role: boolean;
  supports_tools: boolean;
  supports_tool_calls: boolean;
  supports_parallel_tool_calls: boolean;
  supports_tool_call_id: boolean;
  supports_tool_responses: boolean;
  supports_reasoning: boolean;
  reasoning_field: string | null;
  supports_documents: boolean;
  supports_string_content: boolean;
  supports_typed_content: boolean;
  requires_object_arguments: boolean;
  requires_typed_content: boolean;
  thinking_switch: string | null;
  generation_prompt: string | null;
  reply_format: string;
  stop_strings: string[];
  prefix_stable: boolean | null;
  [key: string]: Json;
}

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface Citation {
  start: number;
  end: number;
  text: string;
  sources: { tool_call_index: number; result_indices: number[] }[];
}

export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  reasoning_content: string | null;
  tool_calls?: ToolCall[];
  citations?: Citation[];
}

/** An OpenAI chat.completion.chunk delta. */
export interface Delta {
  content?: string;
  reasoning_content?: string;
  tool_calls?: { index: number; id?: string; type?: "function"; function: { name?: string; arguments?: string } }[];
  citations?: Citation[];
}

export interface ReplyOptions {
  /** The model's chat template: picks the format and whether the prompt opened reasoning. */
  template?: Template | string | null;
  tools?: Json[] | null;
  /** "glm45", "hermes", "command-a" or "plain": overrides the template's. */
  format?: string | null;
  /** The rendered prompt the reply continues (its end tells whether reasoning is open). */
  prompt?: string | Uint8Array | null;
  reasoningOpen?: boolean;
  /** The request's response_format asking for JSON ({type: "json_object"}, "json"): the content
   * is the JSON answer, a ```json fence around it dropped. */
  responseFormat?: "json" | "text" | { type: "json_object" | "json_schema" | "text"; [key: string]: Json } | null;
  limits?: Limits | null;
  /** Variables for the template's probe render, e.g. {enable_thinking: false}. */
  variables?: Record<string, Json>;
}

export function applyChatTemplate(template: Template | string, messages: Message[], options?: ChatOptions): string;
export function applyChatTemplate(template: Template | string, messages: Message[][], options?: ChatOptions): string[];
export function applyChatTemplate(template: Template | string, messages: Message[] | Message[][],
  options: TransformersChatOptions): string | string[] | number[] | number[][] | ChatDict;
export function loadTemplate(source: string | Uint8Array | ArrayBuffer, options?: TemplateOptions): Template;
export function caps(template: Template | string): Caps;
export function parseReply(text: string | Uint8Array, options?: ReplyOptions): AssistantMessage;
export class ReplyStream implements Disposable {
  constructor(options?: ReplyOptions);
  feed(chunk: string | Uint8Array): Delta[];
  finish(): Delta[];
  dispose(): void;
  readonly disposed: boolean;
  [Symbol.dispose](): void;
}
export function builtinNames(): string[];
/** Bytes of the WebAssembly heap in use. */
export function heapInUse(): number;
export const version: string;

export interface ErrorFields {
  lineno?: number | null;
  column?: number | null;
  offset?: number | null;
  template?: string | null;
}

/** Base of every chatfmt error; `name` (= `kind`) is the Python exception class name. */
export class ChatfmtError extends Error {
  constructor(message?: string, fields?: ErrorFields);
  readonly kind: string;
  lineno: number | null;
  column: number | null;
  offset: number | null;
  template: string | null;
}
export class TemplateError extends ChatfmtError {}
export class TemplateSyntaxError extends TemplateError {}
export class TemplateAssertionError extends TemplateSyntaxError {}
export class TemplateRuntimeError extends TemplateError {}
export class FilterArgumentError extends TemplateRuntimeError {}
export class UndefinedError extends TemplateRuntimeError {}
export class SecurityError extends TemplateRuntimeError {}
export class LimitError extends ChatfmtError {}
export class ValueError extends ChatfmtError {}
export class KeyError extends ChatfmtError {}
export class AttributeError extends ChatfmtError {}
export class OverflowError extends RangeError {}
export class ZeroDivisionError extends RangeError {}
export class IndexError extends RangeError {}
export class RuntimeError extends ChatfmtError {}
export class JSONDecodeError extends SyntaxError {}
export class UnicodeDecodeError extends ChatfmtError {}
export class FormatError extends ChatfmtError {}
export class UsageError extends ChatfmtError {}
/** Every error class by its Python name (TypeError, MemoryError, IOError, AssertionError too). */
export const errors: Record<string, new (message?: string, fields?: ErrorFields) => Error>;
