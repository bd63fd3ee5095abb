// llamacpp_jinja.cpp CASES.jsonl REFERENCE.jsonl REPEAT
// llama.cpp's own Jinja engine (common/jinja, the one llama-server renders
// chat templates with since it replaced minja) on the cases chatfmt is
// measured on. compare_peers.sh builds this against the engine's sources as
// the llama.rn npm package ships them; nothing of it is part of chatfmt.
//
// A render is what llama-server does per request once the template is
// compiled: the request's JSON (already parsed) turned into the engine's
// globals (jinja::global_from_json), the program run, its string parts
// joined. The context is the case's, as the other peers get it (tools and
// documents null, add_generation_prompt false unless given); the clock is
// pinned to the reference's (CHATFMT_NOW's 2026-03-14T15:09:26, with TZ=UTC).
//
// Prints "parity SAME/N" (the same text as the reference, or an error where
// it fails) and the median microseconds per render over five runs of REPEAT
// passes through the cases whose template compiles. With DEBUG set, each
// case that differs is named on stderr, with where its text first differs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "jinja/lexer.h"
#include "jinja/parser.h"
#include "jinja/runtime.h"
#include "nlohmann/json.hpp"

using ordered_json = nlohmann::ordered_json;

static const std::time_t PINNED_NOW = 1773500966;   // 2026-03-14T15:09:26Z

static std::string read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Case {
    std::string text;                          // template source
    ordered_json context;
    std::shared_ptr<jinja::program> program;   // null: the template does not compile here
    std::string source;                        // as the lexer returned it
};

// A JSON string of s (cut anywhere: a broken UTF-8 sequence shows as U+FFFD).
static std::string quoted(const std::string &s) {
    return ordered_json(s).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

static ordered_json chat_context(const ordered_json &c) {
    ordered_json ctx = c.value("context", ordered_json::object());
    if (!c.value("raw", false)) {
        if (!ctx.contains("tools")) ctx["tools"] = nullptr;
        if (!ctx.contains("documents")) ctx["documents"] = nullptr;
        if (!ctx.contains("add_generation_prompt")) ctx["add_generation_prompt"] = false;
    }
    return ctx;
}

static std::string render(const Case &c) {
    jinja::context ctx(c.source);
    ctx.current_time = PINNED_NOW;
    jinja::global_from_json(ctx, c.context, false);
    jinja::runtime rt(ctx);
    const jinja::value results = rt.execute(*c.program);
    return jinja::runtime::gather_string_parts(results)->as_string().str();
}

int main(int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: llamacpp_jinja CASES.jsonl REFERENCE.jsonl [REPEAT]\n");
        return 2;
    }
    int repeat = argc > 3 ? std::atoi(argv[3]) : 5;
    std::vector<Case> cases;
    std::vector<ordered_json> refs;
    {
        std::ifstream f(argv[1]);
        for (std::string line; std::getline(f, line);) {
            if (line.empty()) continue;
            ordered_json c = ordered_json::parse(line);
            Case k;
            k.text = c.contains("template_text") ? c["template_text"].get<std::string>()
                                                 : read_file(c["template"].get<std::string>());
            k.context = chat_context(c);
            cases.push_back(std::move(k));
        }
        std::ifstream r(argv[2]);
        for (std::string line; std::getline(r, line);)
            if (!line.empty()) refs.push_back(ordered_json::parse(line));
    }
    if (refs.size() != cases.size()) {
        std::fprintf(stderr, "llamacpp_jinja: %zu cases, %zu reference lines\n", cases.size(), refs.size());
        return 2;
    }

    const bool debug = std::getenv("DEBUG") != nullptr;
    size_t same = 0;
    std::vector<size_t> usable;
    for (size_t i = 0; i < cases.size(); i++) {
        Case &c = cases[i];
        bool ok = false;
        std::string out;
        try {
            jinja::lexer lexer;
            auto tokens = lexer.tokenize(c.text);
            c.program = std::make_shared<jinja::program>(jinja::parse_from_tokens(tokens));
            c.source = tokens.source;
            usable.push_back(i);
            out = render(c);
            ok = true;
        } catch (const std::exception &e) {
            if (debug) std::fprintf(stderr, "%zu: %s\n", i, e.what());
        }
        const bool ref_ok = refs[i].value("ok", false);
        const std::string want = ref_ok ? refs[i]["output"].get<std::string>() : std::string();
        const bool match = ref_ok ? ok && out == want : !ok;
        same += match;
        if (!match && debug) {
            std::fprintf(stderr, "case %zu differs%s\n", i, ok ? "" : " (failed)");
            if (ok && ref_ok) {   // where: the first differing byte, with some context
                size_t at = 0;
                while (at < out.size() && at < want.size() && out[at] == want[at]) at++;
                size_t from = at > 60 ? at - 60 : 0;
                std::fprintf(stderr, "  got  %s\n  want %s\n", quoted(out.substr(from, 120)).c_str(),
                             quoted(want.substr(from, 120)).c_str());
            }
        }
    }

    std::vector<double> runs;
    for (int r = 0; r < 5; r++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < repeat; k++)
            for (size_t i : usable) {
                try {
                    render(cases[i]);
                } catch (const std::exception &) {
                    // failing renders cost time too
                }
            }
        double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        runs.push_back(us / (double)(repeat * std::max<size_t>(usable.size(), 1)));
    }
    std::sort(runs.begin(), runs.end());
    std::printf("llama.cpp jinja\tparity %zu/%zu\tus_per_render %.2f\n", same, cases.size(), runs[2]);
    return 0;
}
