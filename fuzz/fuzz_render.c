/* fuzz_render.c — libFuzzer: any bytes as a template, compiled and rendered
 * in chat mode with a fixed conversation (system, user, assistant with
 * reasoning and a tool call, tool result; tools; special tokens). Nothing
 * may crash, hang or leak; a failure must come with an error. */
#include "fuzz_common.h"

static const char CONTEXT[] =
    "{\"messages\": ["
    "{\"role\": \"system\", \"content\": \"You are terse.\"},"
    "{\"role\": \"user\", \"content\": \"Weather in Paris? \\u00e9\\u4e2d\\ud83d\\ude00\"},"
    "{\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"Use the tool.\","
    " \"tool_calls\": [{\"id\": \"call_0\", \"type\": \"function\", \"function\":"
    " {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}}]},"
    "{\"role\": \"tool\", \"tool_call_id\": \"call_0\", \"content\": \"{\\\"t\\\": 21.5}\"},"
    "{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Thanks\"}]}],"
    " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\","
    " \"description\": \"Get weather\", \"parameters\": {\"type\": \"object\","
    " \"properties\": {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"array\"}},"
    " \"required\": [\"city\"]}}}],"
    " \"add_generation_prompt\": true, \"enable_thinking\": true,"
    " \"bos_token\": \"<s>\", \"eos_token\": \"</s>\"}";

static cf_context *ctx;
static cf_limits limits;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    cf_error err;
    ctx = cf_context_from_json(CONTEXT, sizeof CONTEXT - 1, &err);
    if (!ctx) abort();
    limits = fuzz_limits();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cf_error err;
    cf_compile_options co = {&limits, "fuzz"};
    cf_template *t = cf_compile((const char *)data, size, &co, &err);
    if (!t) {
        fuzz_check_error(&err);
        return 0;
    }
    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.limits = &limits;
    ro.now = "2026-01-02T03:04:05";
    cf_result r;
    if (cf_render_chat(t, ctx, &ro, &r, &err)) {
        FUZZ_CHECK(r.text && r.text[r.len] == 0 && r.len <= limits.max_output);
        cf_result_free(&r);
    } else {
        fuzz_check_error(&err);
    }
    cf_template_free(t);
    return 0;
}
