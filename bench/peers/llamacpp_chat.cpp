// llamacpp_chat.cpp < CASES.jsonl > RESULTS.jsonl
// llama.cpp's own reply parser (common/chat: the format it detects from the
// template, and common_chat_parse) on the replies chatfmt's reply tests
// parse. compare_peers.sh builds this against llama.cpp's sources as the
// llama.rn npm package ships them; nothing of it is part of chatfmt.
//
// Each input line: {"template": PATH, "tools": [...] or null, "reply": TEXT,
// "kwargs": {"enable_thinking": false, ...} or absent, "prompt": TEXT or
// absent}. Done as llama-server does for a request: the template compiled
// once (common_chat_templates_init, bos "<s>", eos "</s>"), the request (one
// user turn, the tools, parallel tool calls allowed, the server's default
// reasoning format "deepseek", the template switches) applied to get the
// format, the generation prompt and the parser, then the whole reply parsed
// (common_chat_parse, not partial). llama.cpp cannot be handed a prompt; when
// the case gives the one the reply followed, the request is the one whose
// prompt that is: llama-server's default (enable_thinking on) unless only
// enable_thinking off renders it (its generation prompt ends the given one).
// Each output line: {"message": {"content", "reasoning_content",
// "tool_calls": [{"id", "type", "function": {"name", "arguments"}}]}} or
// {"error": WHAT} where llama.cpp throws. The last line on stderr: the
// number of cases and the median microseconds of a parse (the template's
// preparation not counted).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cstdarg>
#include <cstdlib>

#include "chat.h"
#include "ggml.h"
#include "log.h"
#include "nlohmann/json.hpp"

using json = nlohmann::ordered_json;

// Its assertions end in ggml's abort, which lives in libggml (not built
// here: no model runs). The same: say where, stop.
extern "C" void lm_ggml_abort(const char *file, int line, const char *fmt, ...) {
    std::fprintf(stderr, "llamacpp_chat: llama.cpp assertion at %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::abort();
}

static const std::time_t PINNED_NOW = 1773500966;   // 2026-03-14T15:09:26Z, as the reference's clock

static std::string read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// What a request gives the parser: prepared once per template, tools and switches.
struct Prepared {
    common_chat_templates_ptr templates;
    common_chat_parser_params parser_params;
    std::string prompt;  // the rendered prompt, generation prompt included
    std::string error;   // non-empty: preparing failed
};

static bool ends_with(const std::string &s, const std::string &end) {
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

static void prepare(Prepared &p, const std::string &path, const json &tools, const json &kwargs) {
    p.templates = common_chat_templates_init(nullptr, read_file(path), "<s>", "</s>");
    common_chat_templates_inputs in;
    common_chat_msg user;
    user.role = "user";
    user.content = "What is the weather in Paris?";
    in.messages.push_back(user);
    if (tools.is_array()) in.tools = common_chat_tools_parse_oaicompat(tools);
    in.parallel_tool_calls = true;
    in.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;   // llama-server's default
    in.now = std::chrono::system_clock::from_time_t(PINNED_NOW);
    if (kwargs.is_object()) {
        for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
            in.chat_template_kwargs[it.key()] = it.value().dump();
            if (it.key() == "enable_thinking" && it.value().is_boolean()) in.enable_thinking = it.value().get<bool>();
        }
    }
    common_chat_params params = common_chat_templates_apply(p.templates.get(), in);
    p.prompt = params.prompt;
    p.parser_params = common_chat_parser_params(params);
    p.parser_params.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
    p.parser_params.parse_tool_calls = true;
    if (!params.parser.empty()) p.parser_params.parser.load(params.parser);
}

static json message_json(const common_chat_msg &m) {
    json calls = json::array();
    for (const auto &c : m.tool_calls) {
        calls.push_back({{"id", c.id}, {"type", "function"},
                         {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    return {{"content", m.content}, {"reasoning_content", m.reasoning_content}, {"tool_calls", calls}};
}

int main() {
    common_log_set_verbosity_thold(-1);   // its warnings are not results
    std::map<std::string, std::unique_ptr<Prepared>> cache;
    std::vector<double> micros;
    std::string line;
    size_t n = 0;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        n++;
        json out;
        try {
            const json c = json::parse(line);
            const json tools = c.contains("tools") ? c["tools"] : json();
            const std::string path = c["template"].get<std::string>();
            auto prepared = [&](const json &kwargs) -> Prepared & {
                auto &slot = cache[path + "\n" + tools.dump() + "\n" + kwargs.dump()];
                if (!slot) {
                    slot = std::make_unique<Prepared>();
                    try {
                        prepare(*slot, path, tools, kwargs);
                    } catch (const std::exception &e) {
                        slot->error = std::string("template: ") + e.what();
                    }
                }
                return *slot;
            };
            Prepared *slot = &prepared(c.contains("kwargs") ? c["kwargs"] : json());
            if (c.contains("prompt") && c["prompt"].is_string()) {
                const std::string given = c["prompt"].get<std::string>();
                if (slot->prompt != given && !ends_with(given, slot->parser_params.generation_prompt)) {
                    Prepared &off = prepared(json{{"enable_thinking", false}});
                    if (off.error.empty() && (off.prompt == given || ends_with(given, off.parser_params.generation_prompt)))
                        slot = &off;
                }
            }
            if (!slot->error.empty()) {
                out = {{"error", slot->error}};
            } else {
                const std::string reply = c["reply"].get<std::string>();
                auto t0 = std::chrono::steady_clock::now();
                common_chat_msg m = common_chat_parse(reply, false, slot->parser_params);
                auto t1 = std::chrono::steady_clock::now();
                micros.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
                out = {{"message", message_json(m)}};
            }
        } catch (const std::exception &e) {
            out = {{"error", e.what()}};
        }
        std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    }
    std::sort(micros.begin(), micros.end());
    std::fprintf(stderr, "llamacpp_chat: %zu cases, %zu parsed, median %.1f us a parse\n", n, micros.size(),
                 micros.empty() ? 0.0 : micros[micros.size() / 2]);
    return 0;
}
