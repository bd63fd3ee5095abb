/* formats.c — the reply formats engine.c reads, as data (format_desc.h).
 * Adding a family is an entry here plus its cases in tests/reply_formats_cases.py.
 * Order matters only for detection (src/chat/caps.c tries them in this
 * order after the hand-written formats): a more specific syntax first. */
#include "format_desc.h"
#include "families.h"
#include <stddef.h>
#include <string.h>

#define THINK .think_open = {"<think>"}, .think_close = {"</think>"}
/* The JSON keys most call objects use. */
#define NAME_ARGS .name_keys = {"name"}, .args_keys = {"arguments", "parameters"}
/* DeepSeek's fullwidth-bar tokens (U+FF5C, U+2581). */
#define DS_CALLS_BEGIN "<\xEF\xBD\x9Ctool\xE2\x96\x81" "calls\xE2\x96\x81" "begin\xEF\xBD\x9C>"
#define DS_CALLS_END "<\xEF\xBD\x9Ctool\xE2\x96\x81" "calls\xE2\x96\x81" "end\xEF\xBD\x9C>"
#define DS_CALL_BEGIN "<\xEF\xBD\x9Ctool\xE2\x96\x81" "call\xE2\x96\x81" "begin\xEF\xBD\x9C>"
#define DS_CALL_END "<\xEF\xBD\x9Ctool\xE2\x96\x81" "call\xE2\x96\x81" "end\xEF\xBD\x9C>"
#define DS_CALLS_LONE "<\xEF\xBD\x9Ctool\xE2\x96\x81" "calls\xEF\xBD\x9C>"
#define DS_SEP "<\xEF\xBD\x9Ctool\xE2\x96\x81sep\xEF\xBD\x9C>"
#define FWBAR "\xEF\xBD\x9C"   /* ｜ */
#define MM_NS "]<]minimax[>["     /* MiniMax M3's namespace token */
/* Header fields: text up to one of the markers. */
#define FIELD(k, ...) {.kind = (k), .end = {__VA_ARGS__}}
#define LITERAL(t, ...) {.kind = HF_LITERAL, .end = {__VA_ARGS__}, .text = (t)}

const ReplyFormatDesc REPLY_FORMATS[] = {
    {
        .id = CF_REPLY_QWEN3_CODER, .name = "qwen3-coder",
        .example = "<tool_call>\\n<function=f>\\n<parameter=k>\\nv\\n</parameter>\\n</function>\\n</tool_call>",
        THINK, .calls_in_reasoning = true,   /* Qwen3.5 calls before </think> */
        .section_open = {"<tool_call>"}, .section_close = {"</tool_call>"}, .section_optional = true,
        .call_open = {"<function="},
        .header = {FIELD(HF_NAME, ">")}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<parameter="}, .key_close = {">"}, .value_close = {"</parameter>"},
        .params_close = {"</function>"}, .trim_value = true,
    },
    {
        .id = CF_REPLY_SEED_OSS, .name = "seed-oss",
        .example = "<seed:think>R</seed:think><seed:tool_call><function=f><parameter=k>v</parameter></function></seed:tool_call>",
        .think_open = {"<seed:think>"}, .think_close = {"</seed:think>"},
        .section_open = {"<seed:tool_call>"}, .section_close = {"</seed:tool_call>"},
        .call_open = {"<function="},
        .header = {FIELD(HF_NAME, ">")}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<parameter="}, .key_close = {">"}, .value_close = {"</parameter>"},
        .params_close = {"</function>"},
    },
    {
        .id = CF_REPLY_MINIMAX_M2, .name = "minimax-m2",
        .example = "<minimax:tool_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke></minimax:tool_call>",
        .think_open = {"<think>", "<mm:think>"}, .think_close = {"</think>", "</mm:think>"},   /* M3: mm: */
        .section_open = {"<minimax:tool_call>"}, .section_close = {"</minimax:tool_call>"},
        .call_open = {"<invoke name=\""},
        .header = {FIELD(HF_NAME, "\">")}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<parameter name=\""}, .key_close = {"\">"}, .value_close = {"</parameter>"},
        .params_close = {"</invoke>"},
    },
    {
        .id = CF_REPLY_DEEPSEEK_R1, .name = "deepseek-r1",
        .example = "<think>R</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\\n```json\\n{...}\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        THINK,
        /* R1 distills also open a lone call with <｜tool▁calls｜> and still
         * close the section after it: that closer is dropped */
        .drop = {DS_CALLS_END},
        .section_open = {DS_CALLS_BEGIN}, .section_close = {DS_CALLS_END}, .section_optional = true,
        .call_open = {DS_CALL_BEGIN, DS_CALLS_LONE}, .call_close = {DS_CALL_END},
        .header = {LITERAL("function", DS_SEP), FIELD(HF_NAME, "\n```json")}, .nheader = 2,
        .body = BODY_JSON_ARGS, .args_after = "```",
    },
    {
        .id = CF_REPLY_DEEPSEEK_V31, .name = "deepseek-v3.1",
        .example = "<think>R</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        THINK,
        .section_open = {DS_CALLS_BEGIN}, .section_close = {DS_CALLS_END}, .section_optional = true,
        .call_open = {DS_CALL_BEGIN}, .call_close = {DS_CALL_END},
        .header = {FIELD(HF_NAME, DS_SEP)}, .nheader = 1,
        .body = BODY_JSON_ARGS,
    },
    {
        .id = CF_REPLY_DEEPSEEK_DSML, .name = "deepseek-dsml",
        .example = "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"k\" string=\"true\">v</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>",
        THINK,
        .section_open = {"<" FWBAR "DSML" FWBAR "function_calls>", "<" FWBAR "DSML" FWBAR "tool_calls>"},
        .section_close = {"</" FWBAR "DSML" FWBAR "function_calls>", "</" FWBAR "DSML" FWBAR "tool_calls>"},
        .call_open = {"<" FWBAR "DSML" FWBAR "invoke name=\""},
        .header = {FIELD(HF_NAME, "\">")}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<" FWBAR "DSML" FWBAR "parameter name=\""}, .key_close = {"\">"},
        .key_flag = "\" string=\"", .flag_close = "\">", .flag_string = "true", .flag_json = "false",
        .value_close = {"</" FWBAR "DSML" FWBAR "parameter>"},
        .params_close = {"</" FWBAR "DSML" FWBAR "invoke>"},
    },
    {
        .id = CF_REPLY_GIGACHAT_GCML, .name = "gigachat-gcml",
        .example = "<｜GCML｜tool_calls><｜GCML｜invoke name=\"f\"><｜GCML｜parameter name=\"k\" string=\"true\">v</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>",
        THINK,
        .section_open = {"<" FWBAR "GCML" FWBAR "tool_calls>"},
        .section_close = {"</" FWBAR "GCML" FWBAR "tool_calls>"},
        .call_open = {"<" FWBAR "GCML" FWBAR "invoke name=\""},
        .header = {FIELD(HF_NAME, "\">")}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<" FWBAR "GCML" FWBAR "parameter name=\""}, .key_close = {"\">"},
        .key_flag = "\" string=\"", .flag_close = "\">", .flag_string = "true", .flag_json = "false",
        .value_close = {"</" FWBAR "GCML" FWBAR "parameter>"},
        .params_close = {"</" FWBAR "GCML" FWBAR "invoke>"},
    },
    {
        .id = CF_REPLY_KIMI_K2, .name = "kimi-k2",
        .example = "<think>R</think><|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{...}<|tool_call_end|><|tool_calls_section_end|>",
        THINK, .calls_in_reasoning = true,
        .section_open = {"<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"},
        .section_close = {"<|tool_calls_section_end|>", "<|tool_call_section_end|>"},
        .section_optional = true,
        .call_open = {"<|tool_call_begin|>"}, .call_close = {"<|tool_call_end|>"},
        .header = {FIELD(HF_KIMI_ID, "<|tool_call_argument_begin|>")}, .nheader = 1,
        .body = BODY_JSON_ARGS,
    },
    {
        .id = CF_REPLY_SOLAR_OPEN, .name = "solar-open",
        .example = "<|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>f<|tool_call:args|>{...}<|tool_call:end|><|calls|>",
        .drop = {"<|content|>"},
        .section_open = {"<|tool_calls|>"}, .section_close = {"<|calls|>"},
        .call_open = {"<|tool_call:begin|>"}, .call_close = {"<|tool_call:end|>"},
        .header = {FIELD(HF_ID, "<|tool_call:name|>"), FIELD(HF_NAME, "<|tool_call:args|>")}, .nheader = 2,
        .body = BODY_JSON_ARGS,
    },
    {
        .id = CF_REPLY_HUNYUAN_V3, .name = "hunyuan-v3",
        .example = "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource><arg_key:opensource>k</arg_key:opensource><arg_value:opensource>v</arg_value:opensource></tool_call:opensource></tool_calls:opensource>",
        /* the template writes the :opensource tokens; vLLM's hy_v3 reasoning
         * parser reads them decoded as <think>...</think> */
        .think_open = {"<think:opensource>", "<think>"}, .think_close = {"</think:opensource>", "</think>"},
        .section_open = {"<tool_calls:opensource>"}, .section_close = {"</tool_calls:opensource>"},
        .call_open = {"<tool_call:opensource>"},
        .header = {FIELD(HF_NAME, "<tool_sep:opensource>")}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<arg_key:opensource>"}, .key_close = {"</arg_key:opensource>"},
        .value_open = "<arg_value:opensource>", .value_close = {"</arg_value:opensource>"},
        .params_close = {"</tool_call:opensource>"},
    },
    {
        .id = CF_REPLY_STEP3, .name = "step3",
        .example = "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"k\">v</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
        THINK,
        .section_open = {"<" FWBAR "tool_calls_begin" FWBAR ">"}, .section_close = {"<" FWBAR "tool_calls_end" FWBAR ">"},
        .call_open = {"<" FWBAR "tool_call_begin" FWBAR ">"}, .call_close = {"<" FWBAR "tool_call_end" FWBAR ">"},
        .header = {LITERAL("function", "<" FWBAR "tool_sep" FWBAR ">"),
                   LITERAL("", "<steptml:invoke name=\""), FIELD(HF_NAME, "\">")},
        .nheader = 3,
        .body = BODY_XML,
        .param_open = {"<steptml:parameter name=\""}, .key_close = {"\">"},
        .value_close = {"</steptml:parameter>"}, .params_close = {"</steptml:invoke>"},
    },
    {
        .id = CF_REPLY_MINICPM5, .name = "minicpm5",
        .example = "<function name=\"f\"><param name=\"k\">v</param></function>",
        THINK,
        .call_open = {"<function name=\""},
        .header = {FIELD(HF_NAME, "\">")}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<param name=\""}, .key_close = {"\">"}, .value_close = {"</param>"},
        .verbatim_open = "<![CDATA[", .verbatim_close = "]]>",
        .params_close = {"</function>"},
    },
    {
        .id = CF_REPLY_NEMOTRON_V2, .name = "nemotron-v2",
        .example = "<think>R</think><TOOLCALL>[{\"name\": \"f\", \"arguments\": {...}}]</TOOLCALL>",
        THINK, .calls_in_reasoning = true,
        .section_open = {"<TOOLCALL>"}, .section_close = {"</TOOLCALL>"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY, NAME_ARGS,
    },
    {
        /* Granite 3.x: the templates never print a call, only ask for it;
         * 3.2 reasons in plain words, 3.3 in <think> */
        .id = CF_REPLY_GRANITE, .name = "granite",
        .example = "<think>R</think><response>C</response><|tool_call|>[{\"name\": \"f\", \"arguments\": {...}}]",
        .signature = {"<|tool_call|>", "<|start_of_role|>"},
        .think_open = {"<think>", "Here is my thought process:"},
        .think_close = {"</think>", "Here is my response:"},
        .drop = {"<response>", "</response>"},
        .section_open = {"<|tool_call|>"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY, NAME_ARGS,
    },
    {
        .id = CF_REPLY_APERTUS, .name = "apertus",
        .example = "<|inner_prefix|>R<|inner_suffix|><|tools_prefix|>[{\"f\": {...}}]<|tools_suffix|>",
        .think_open = {"<|inner_prefix|>"}, .think_close = {"<|inner_suffix|>"},
        .section_open = {"<|tools_prefix|>"}, .section_close = {"<|tools_suffix|>"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY, .name_is_key = true,
    },
    {
        .id = CF_REPLY_APRIEL, .name = "apriel",
        .example = "<thinking>R</thinking><tool_calls>[{\"name\": \"f\", \"arguments\": {...}}]</tool_calls>",
        /* Apriel 1.6's prompt opens reasoning in words; its answer follows a marker */
        .think_open = {"<thinking>", "Here are my reasoning steps:"},
        .think_close = {"</thinking>", "[BEGIN FINAL RESPONSE]"},
        .section_open = {"<tool_calls>"}, .section_close = {"</tool_calls>"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY, NAME_ARGS,
    },
    {
        .id = CF_REPLY_HUNYUAN, .name = "hunyuan",
        .example = "<think>R</think><answer>C</answer><tool_calls>[{\"name\": \"f\", \"arguments\": {...}}]</tool_calls>",
        THINK, .drop = {"<answer>", "</answer>"},
        .section_open = {"<tool_calls>"}, .section_close = {"</tool_calls>"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY, NAME_ARGS,
    },
    {
        .id = CF_REPLY_JAMBA, .name = "jamba",
        .example = "<tool_calls>[{\"name\": \"f\", \"arguments\": {...}}]</tool_calls>",
        THINK,
        .section_open = {"<tool_calls>"}, .section_close = {"</tool_calls>"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY, NAME_ARGS,
    },
    {
        .id = CF_REPLY_MINIMAX_M1, .name = "minimax-m1",
        .example = "<think>R</think><tool_calls>\\n{\"name\": \"f\", \"arguments\": {...}}\\n</tool_calls>",
        THINK,
        .section_open = {"<tool_calls>"}, .section_close = {"</tool_calls>"},
        .body = BODY_JSON_CALL, .list = LIST_SEQUENCE, NAME_ARGS,
    },
    {
        .id = CF_REPLY_INTERNLM, .name = "internlm",
        .example = "<|action_start|><|plugin|>\\n{\"name\": \"f\", \"parameters\": {...}}<|action_end|>",
        THINK,
        .section_open = {"<|action_start|>"}, .section_close = {"<|action_end|>"},
        .call_open = {"<|plugin|>"},
        .body = BODY_JSON_CALL, NAME_ARGS,
    },
    {
        .id = CF_REPLY_LONGCAT, .name = "longcat",
        .example = "<longcat_tool_call>{\"name\": \"f\", \"arguments\": {...}}</longcat_tool_call>",
        THINK,
        .call_open = {"<longcat_tool_call>"}, .call_close = {"</longcat_tool_call>"},
        .body = BODY_JSON_CALL, NAME_ARGS,
    },
    {
        /* GigaChat 3 ends its text message and writes the call as a message
         * of the "function call" role; GigaChat 3.1 marks it with a token */
        .id = CF_REPLY_GIGACHAT3, .name = "gigachat3",
        .example = "C<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{\"name\": \"f\", \"arguments\": {...}} or <|function_call|>{...}<|message_sep|>",
        THINK,
        .section_open = {"<|message_sep|>"}, .section_ends_message = true,
        .call_open = {"function call"}, .header = {LITERAL("", "<|role_sep|>")}, .nheader = 1,
        .bare_call_open = {"<|function_call|>"}, .call_close = {"<|message_sep|>"},
        .body = BODY_JSON_CALL, NAME_ARGS,
    },
    {
        .id = CF_REPLY_GRANITE_20B_FC, .name = "granite-20b-fc",
        .example = "<function_call> {\"name\": \"f\", \"arguments\": {...}}",
        .call_open = {"<function_call>"},
        .body = BODY_JSON_CALL, NAME_ARGS,
    },
    {
        .id = CF_REPLY_ERNIE45, .name = "ernie45",
        .signature = {"<|begin_of_sentence|>", "<|end_of_sentence|>"},   /* ERNIE 4.5's own tokens */
        .example = "<think>R</think><response>C</response><tool_call>{\"name\": \"f\", \"arguments\": {...}}</tool_call>",
        THINK, .drop = {"<response>", "</response>"},
        .call_open = {"<tool_call>"}, .call_close = {"</tool_call>"},
        .body = BODY_JSON_CALL, NAME_ARGS,
    },
    {
        /* Command R/R+: a JSON list of actions after "Action:" */
        .id = CF_REPLY_COMMAND_R, .name = "command-r",
        .example = "C\\nAction:\\n```json\\n[{\"tool_name\": \"f\", \"parameters\": {...}}]```",
        .drop = {"<|CHATBOT_TOKEN|>"},   /* the prompt's turn header, written again */
        .section_open = {"Action:\n```json"}, .section_close = {"```"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY,
        .name_keys = {"tool_name"}, .args_keys = {"parameters"},
    },
    {
        /* HyperCLOVA X SEED Think writes reasoning, its answer and its calls
           as turns of their own, each closed by <|im_end|>; the reply ends at
           <|endofturn|> (an answer) or <|stop|> (calls) */
        .id = CF_REPLY_HYPERCLOVAX, .name = "hyperclovax",
        .example = "/think\\nR<|im_end|>\\n<|im_start|>assistant -> tool/function_call\\n[{\"name\": \"f\", \"arguments\": {...}}]",
        .think_open = {"/think"}, .think_close = {"<|im_end|>"},
        .drop = {"<|im_end|>", "<|im_start|>assistant", "<|stop|>"},
        .section_open = {"-> tool/function_call"},
        .body = BODY_JSON_CALL, .list = LIST_ARRAY, NAME_ARGS,
    },
    {
        /* llama-cpp-python's chatml-function-calling: calls follow each other
           with nothing between them */
        .id = CF_REPLY_CHATML_FUNCTIONS, .name = "chatml-functions",
        .example = "functions.f:\\n{...}functions.g:\\n{...}",
        .call_open = {"functions."},
        .header = {FIELD(HF_NAME, ":\n")}, .nheader = 1,
        .body = BODY_JSON_ARGS,
    },
    {
        /* Functionary v2: every turn is addressed; the prompt ends with the
           first turn's "<|recipient|>" */
        .id = CF_REPLY_FUNCTIONARY_V2, .name = "functionary-v2",
        .example = "all\\n<|content|>C\\n<|from|>assistant\\n<|recipient|>f\\n<|content|>{...}",
        .call_open = {"<|from|>assistant"},
        .header = {LITERAL("", "<|recipient|>"), FIELD(HF_NAME, "\n<|content|>")}, .nheader = 2,
        .body = BODY_JSON_ARGS,
        .opens_in_field = 2, .content_name = "all",
    },
    {
        /* Glimmer's ATEM protocol: every message is addressed (to=self is
           reasoning, to=user content, to=TOOL a call); the prompt ends with
           the first message's "<|start|>assistant" */
        .id = CF_REPLY_GLIMMER, .name = "glimmer",
        .example = " to=self<|message|>R<|eom|><|start|>assistant to=f<|message|><atem:function_calls><atem:invoke name=\"f\"><atem:parameter name=\"k\">v</atem:parameter></atem:invoke></atem:function_calls>",
        .think_close = {"<|eom|>"},
        .drop = {"<|eom|>"},
        .call_open = {"<|start|>assistant"}, .call_close = {"</atem:function_calls>"},
        .header = {LITERAL("", "to="), FIELD(HF_NAME, "<|message|>"), LITERAL("", "<atem:function_calls>"),
                   LITERAL("", "<atem:invoke name=\""), FIELD(HF_SAME_NAME, "\">")},
        .nheader = 5,
        .body = BODY_XML,
        .param_open = {"<atem:parameter name=\""}, .key_close = {"\">"}, .value_close = {"</atem:parameter>"},
        .params_close = {"</atem:invoke>"},
        .opens_in_field = 1, .content_name = "user", .reasoning_name = "self",
    },
    {
        /* Kimi K3's XTML: every element is <|open|>TAG ATTRS<|sep|> ...
           <|close|>TAG<|sep|>; a call's arguments are typed by their type
           attribute (a string raw, anything else JSON) */
        .id = CF_REPLY_KIMI_K3, .name = "kimi-k3",
        .example = "<|open|>think<|sep|>R<|close|>think<|sep|><|open|>response<|sep|>C<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"k\" type=\"string\"<|sep|>v<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        .think_open = {"<|open|>think<|sep|>"}, .think_close = {"<|close|>think<|sep|>"},
        /* the answer's wrapper, and the message's end before <|end_of_msg|> */
        .drop = {"<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>"},
        .section_open = {"<|open|>tools<|sep|>"}, .section_close = {"<|close|>tools<|sep|>"},
        .call_open = {"<|open|>call tool=\""},
        .header = {FIELD(HF_NAME, "\" index=\""), FIELD(HF_NUMBER, "\"<|sep|>")}, .nheader = 2,
        .body = BODY_XML,
        .param_open = {"<|open|>argument key=\""}, .key_close = {"\"<|sep|>"},
        .key_flag = "\" type=\"", .flag_close = "\"<|sep|>", .flag_string = "string",
        .flag_json = "number|integer|boolean|null|object|array",
        .value_close = {"<|close|>argument<|sep|>"},
        .params_close = {"<|close|>call<|sep|>"},
    },
    {
        /* MiniMax M3 (muse): every tag of a call after the ]<]minimax[>[
           token, the arguments as elements named by their keys */
        .id = CF_REPLY_MINIMAX_M3, .name = "minimax-m3",
        .example = "<mm:think>R</mm:think>C]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[<k>v]<]minimax[>[</k>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>",
        .think_open = {"<mm:think>"}, .think_close = {"</mm:think>"},
        .section_open = {MM_NS "<tool_call>"}, .section_close = {MM_NS "</tool_call>"},
        .call_open = {MM_NS "<invoke name=\""},
        .header = {FIELD(HF_NAME, "\">")}, .nheader = 1,
        .body = BODY_XML_TREE, .element_prefix = MM_NS, .element_item = "item", .element_end = "invoke",
    },
};

const size_t REPLY_FORMATS_COUNT = sizeof REPLY_FORMATS / sizeof REPLY_FORMATS[0];

/* A Hermes call as Llama 3.x and Qwen models sometimes write it:
 * <function=NAME>{...}</function> or <function name="NAME">{...}</function>. */
static const ReplyFormatDesc HERMES_FUNCTION = {
    .id = CF_REPLY_HERMES, .name = "hermes",
    .call_open = {"<function=", "<function name=\""}, .call_close = {"</function>"},
    .header = {FIELD(HF_NAME, ">", "\">")}, .nheader = 1,
    .body = BODY_JSON_ARGS,
};

/* The tags Hermes 2 Pro and Qwen models wrap a call object in. */
#define HERMES_OPENERS "<tool_call>", "<function_call>", "<tool>", "<tools>", "<response>", "<json>", "<xml>", "<JSON>"
#define HERMES_CLOSERS "</tool_call>", "</function_call>", "</tool>", "</tools>", "</response>", "</json>", "</xml>", \
                       "</JSON>"

/* ... or the call object in a Markdown code block, ```json, ```xml or ```,
 * alone or in one of those tags: the fence is the call's wrapping. */
static const ReplyFormatDesc HERMES_FENCE = {
    .id = CF_REPLY_HERMES, .name = "hermes",
    .section_open = {"```"}, .section_close = {"```"},
    .header = {LITERAL("json|xml|JSON|", "\n")}, .nheader = 1,
    .body = BODY_JSON_CALL, NAME_ARGS,
    .body_wrap_open = {HERMES_OPENERS}, .body_wrap_close = {HERMES_CLOSERS},
};

/* Described formats that detection reaches by their own rules first
 * (cf_reply_format_detect, caps.c's probe order), not in REPLY_FORMATS'
 * signature order. */
static const ReplyFormatDesc CORE_FORMATS[] = {
    {
        .id = CF_REPLY_PLAIN, .name = "plain", .example = "<think>R</think>C",
        THINK, .no_calls = true,
    },
    {   /* Hermes 2 Pro and Qwen models also wrap the call object in other tags or
         * a code block, or write <function=NAME>{...}</function> */
        .id = CF_REPLY_HERMES, .name = "hermes",
        .example = "<think>R</think>C<tool_call>{\"name\": \"f\", \"arguments\": {...}}</tool_call>",
        THINK,
        .call_open = {HERMES_OPENERS}, .call_close = {HERMES_CLOSERS},
        .body = BODY_JSON_CALL, NAME_ARGS,
        .alt = {&HERMES_FUNCTION, &HERMES_FENCE},
    },
    {   /* GLM-4.5/4.6 write "NAME\n<arg_key>", 4.7/5 "NAME<arg_key>" */
        .id = CF_REPLY_GLM45, .name = "glm45",
        .example = "<think>R</think>C<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
        THINK, .think_in_content = true,
        .call_open = {"<tool_call>"},
        .header = {{.kind = HF_NAME, .token = true}}, .nheader = 1,
        .body = BODY_XML,
        .param_open = {"<arg_key>"}, .key_close = {"</arg_key>"},
        .value_open = "<arg_value>", .value_close = {"</arg_value>"},
        .params_close = {"</tool_call>"},
    },
};

const ReplyFormatDesc *reply_format_desc(cf_reply_format f) {
    for (size_t k = 0; k < sizeof CORE_FORMATS / sizeof CORE_FORMATS[0]; k++)
        if (CORE_FORMATS[k].id == f) return &CORE_FORMATS[k];
    for (size_t k = 0; k < REPLY_FORMATS_COUNT; k++)
        if (REPLY_FORMATS[k].id == f) return &REPLY_FORMATS[k];
    return NULL;
}

static bool contains(const char *s, size_t n, const char *needle, size_t k) {
    for (size_t i = 0; k && i + k <= n; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return true;
    return false;
}

cf_reply_format reply_format_by_signature(const char *text, size_t n) {
    for (size_t f = 0; f < REPLY_FORMATS_COUNT; f++) {
        const ReplyFormatDesc *d = &REPLY_FORMATS[f];
        const char *need[] = {d->section_open[0], d->call_open[0], d->call_close[0],
                              d->nheader ? d->header[d->nheader - 1].end[0] : NULL, d->param_open[0]};
        int have = 0, asked = 0;
        for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
            if (!need[k]) continue;
            asked++;
            have += contains(text, n, need[k], strlen(need[k]));
        }
        if (asked >= 3 && have == asked) return d->id;
        bool named = d->signature[0] != NULL;
        for (int k = 0; k < DESC_MARKERS && d->signature[k] && named; k++) named = contains(text, n, d->signature[k], strlen(d->signature[k]));
        if (named) return d->id;
    }
    return CF_REPLY_PLAIN;
}

size_t reply_format_text_score(cf_reply_format f, const char *text, size_t n) {
    const ReplyFormatDesc *d = reply_format_desc(f);
    if (!d) return 0;
    const char *const *lists[] = {d->think_open, d->think_close, d->drop, d->section_open, d->section_close,
                                  d->call_open, d->bare_call_open, d->call_close, d->param_open, d->value_close,
                                  d->params_close};
    size_t score = 0;
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        for (int m = 0; m < DESC_MARKERS && lists[k][m]; m++) score += contains(text, n, lists[k][m], strlen(lists[k][m]));
    return score;
}

/* Is s[0..n) one of the markers, or a part of one (a token the marker
 * spells out: <|im_start|> of hyperclovax's "<|im_start|>assistant")? */
static bool in_list(const char *const *list, const char *s, size_t n) {
    for (int k = 0; k < DESC_MARKERS && list[k]; k++)
        if (contains(list[k], strlen(list[k]), s, n)) return true;
    return false;
}

bool reply_format_uses(cf_reply_format f, const char *s, size_t n) {
    /* the hand-written formats' markers a template may print after a reply
     * (harmony: a message's <|end|> and the next <|start|> go on the reply) */
    static const char *const HAND[][DESC_MARKERS] = {
        [CF_REPLY_COMMAND_A] = {"<|END_RESPONSE|>", "<|END_TEXT|>", "<|END_ACTION|>", "<|END_THINKING|>"},
        [CF_REPLY_HARMONY] = {"<|end|>", "<|start|>", "<|channel|>", "<|message|>"},
    };
    const ReplyFormatDesc *d = reply_format_desc(f);
    if (!d) return (unsigned)f < sizeof HAND / sizeof HAND[0] && in_list(HAND[f], s, n);
    const char *const *lists[] = {d->think_open, d->think_close, d->drop, d->section_open, d->section_close,
                                  d->call_open, d->bare_call_open, d->call_close, d->params_close, d->value_close};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        if (in_list(lists[k], s, n)) return true;
    for (int k = 0; k < d->nheader; k++)
        if (in_list(d->header[k].end, s, n)) return true;
    return false;
}

/* Formats without a description that detection also tries, after the
 * described ones: the hand-written families (families.h). Their syntax is
 * looser (llama3-json and xlam take bare JSON), so they come last. */
static const cf_reply_format REPLY_DETECT_EXTRA[] = {
    CF_REPLY_HARMONY, CF_REPLY_MISTRAL, CF_REPLY_GEMMA4, CF_REPLY_FUNCTIONARY_V31, CF_REPLY_FUNCTIONARY_V32,
    CF_REPLY_FUNCTOOLS, CF_REPLY_PYTHONIC, CF_REPLY_XLAM, CF_REPLY_LLAMA3_JSON,
};
enum { REPLY_DETECT_EXTRA_COUNT = sizeof REPLY_DETECT_EXTRA / sizeof REPLY_DETECT_EXTRA[0] };
_Static_assert(REPLY_DETECT_EXTRA_COUNT == FAMILY_COUNT, "every hand-written family is tried");

size_t reply_formats_described(void) { return REPLY_FORMATS_COUNT + REPLY_DETECT_EXTRA_COUNT; }

cf_reply_format reply_format_at(size_t k) {
    return k < REPLY_FORMATS_COUNT ? REPLY_FORMATS[k].id : REPLY_DETECT_EXTRA[k - REPLY_FORMATS_COUNT];
}
