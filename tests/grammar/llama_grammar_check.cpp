// llama_grammar_check.cpp — llama.cpp's own grammar engine (llama-grammar.cpp,
// with no vocabulary, as its grammar tests run it) and its JSON Schema
// converter (common/json-schema-to-grammar.cpp), as chatfmt's tests consume
// them. Built by tests/grammar/llama_engine.sh from the pinned llama.rn
// sources; nothing of llama.cpp is part of chatfmt.
//
// Reads JSON Lines on stdin, one request a line:
//   {"grammar": GBNF | "schema": JSON Schema (converted by json_schema_to_grammar),
//    "lazy": bool, "triggers": [{"type": "word"|"pattern"|"pattern_full", "value"}],
//    "texts": [TEXT...]}
// and writes one line each:
//   {"parsed": bool, "error": MESSAGE, "accepted": [bool...], "triggered": [bool...]}
// A text is fed one code point at a time. A lazy grammar waits for a trigger
// as llama.cpp's sampler does (the word or pattern searched in the text so
// far, the grammar fed from the pattern's first group on); a text that never
// triggers it is accepted unconstrained. Accepted: every code point was
// allowed and the grammar can end there (an end-of-generation is allowed).
#include <cstdarg>
#include <cstdio>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "common.h"
#include "json-schema-to-grammar.h"
#include "llama-grammar.h"
#include "llama-impl.h"
#include "llama-vocab.h"
#include "nlohmann/json.hpp"

using json = nlohmann::ordered_json;

// ---- what llama-grammar.cpp links against, for a null vocabulary ----
static std::string g_log;
void llama_log_internal(lm_ggml_log_level, const char *format, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(buf, sizeof buf, format, ap);
    va_end(ap);
    g_log += buf;
}
void lm_ggml_abort(const char *file, int line, const char *fmt, ...) {
    std::fprintf(stderr, "llama.cpp aborted at %s:%d\n", file, line);
    (void)fmt;
    std::abort();
}
const std::string &llama_vocab::token_to_piece(llama_token) const { std::abort(); }
bool llama_vocab::is_eog(llama_token) const { std::abort(); }
int32_t llama_vocab::tokenize(const char *, int32_t, llama_token *, int32_t, bool, bool) const { std::abort(); }

// ---- the three string helpers json-schema-to-grammar.cpp takes from common.cpp ----
std::string string_join(const std::vector<std::string> &values, const std::string &separator) {
    std::string out;
    for (size_t i = 0; i < values.size(); i++) out += (i ? separator : "") + values[i];
    return out;
}
std::vector<std::string> string_split(const std::string &str, const std::string &delimiter) {
    std::vector<std::string> parts;
    size_t start = 0, end;
    while ((end = str.find(delimiter, start)) != std::string::npos) {
        parts.push_back(str.substr(start, end - start));
        start = end + delimiter.size();
    }
    parts.push_back(str.substr(start));
    return parts;
}
std::string string_repeat(const std::string &str, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; i++) out += str;
    return out;
}

static std::vector<uint32_t> code_points(const std::string &s) {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < s.size();) {
        unsigned char c = (unsigned char)s[i];
        int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
        for (int k = 1; k < n && i + k < s.size(); k++) cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3F);
        out.push_back(cp);
        i += n;
    }
    return out;
}

static std::string word_pattern(const std::string &s) {
    static const std::string special = "\\^$.|?*+()[]{}-";
    std::string out;
    for (char c : s) {
        if (special.find(c) != std::string::npos) out += '\\';
        out += c;
    }
    return out;
}

static bool feed(llama_grammar *g, const std::string &text) {
    for (uint32_t cp : code_points(text)) {
        llama_grammar_accept(g, cp);
        if (g->stacks.empty()) return false;
    }
    return true;
}

static bool can_end(const llama_grammar *g) {
    for (const auto &stack : g->stacks)
        if (stack.empty()) return true;
    return false;
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    std::string last_grammar;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        json req = json::parse(line), res;
        std::string grammar;
        g_log.clear();
        try {
            grammar = req.contains("schema") ? json_schema_to_grammar(req["schema"]) : req.value("grammar", "");
        } catch (const std::exception &e) {
            res["parsed"] = false;
            res["error"] = std::string("json_schema_to_grammar: ") + e.what();
            std::cout << res.dump() << "\n";
            continue;
        }
        std::vector<std::string> patterns;
        for (const auto &t : req.value("triggers", json::array())) {
            std::string type = t.value("type", ""), value = t.value("value", "");
            if (type == "word") patterns.push_back(word_pattern(value));
            else if (type == "pattern") patterns.push_back(value);
            else if (type == "pattern_full")
                patterns.push_back((value.empty() || value[0] != '^' ? "^" : "") + value +
                                   (value.empty() || value.back() != '$' ? "$" : ""));
        }
        bool lazy = req.value("lazy", false);
        llama_grammar *base = nullptr;
        try {
            base = llama_grammar_init_impl(nullptr, grammar.c_str(), "root", false, nullptr, 0, nullptr, 0);
        } catch (const std::exception &e) {
            g_log += e.what();
        }
        res["parsed"] = base != nullptr;
        if (!base) {
            res["error"] = g_log;
            std::cout << res.dump() << "\n";
            continue;
        }
        std::vector<llama_grammar_trigger_pattern> triggers;
        for (const auto &p : patterns) {
            llama_grammar_trigger_pattern tp;
            tp.pattern = p;
            tp.regex = std::regex(p);
            triggers.push_back(tp);
        }
        json accepted = json::array(), triggered = json::array();
        for (const auto &t : req.value("texts", json::array())) {
            std::string text = t.get<std::string>();
            llama_grammar *g = llama_grammar_clone_impl(*base);
            bool ok = true, fired = !lazy;
            try {
                if (!lazy) ok = feed(g, text) && can_end(g);
                else {
                    // the trigger is looked for after each code point, as the text grows
                    std::string buffer;
                    size_t i = 0;
                    for (; i < text.size() && !fired;) {
                        unsigned char c = (unsigned char)text[i];
                        size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
                        buffer.append(text, i, n);
                        i += n;
                        for (const auto &tp : triggers) {
                            size_t pos = tp.find(buffer);
                            if (pos != std::string::npos) {
                                fired = true;
                                ok = feed(g, buffer.substr(pos));
                                break;
                            }
                        }
                    }
                    if (fired) ok = ok && feed(g, text.substr(i)) && can_end(g);
                }
            } catch (const std::exception &) {
                ok = false;
            }
            llama_grammar_free_impl(g);
            accepted.push_back(ok);
            triggered.push_back(fired);
        }
        llama_grammar_free_impl(base);
        res["accepted"] = accepted;
        res["triggered"] = triggered;
        std::cout << res.dump() << "\n";
    }
    return 0;
}
