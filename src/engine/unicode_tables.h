/* unicode_tables.h — layout of the generated tables in unicode_tables.c
 * (see tools/gen_unicode.py for how they are derived). Only unicode.c uses
 * this header; everyone else goes through unicode.h. */
#ifndef CF_UNICODE_TABLES_H
#define CF_UNICODE_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* Property bits, in generator order. */
enum {
    UCP_SPACE = 1 << 0, UCP_ALPHA = 1 << 1, UCP_DECIMAL = 1 << 2, UCP_DIGIT = 1 << 3,
    UCP_NUMERIC = 1 << 4, UCP_UPPER = 1 << 5, UCP_LOWER = 1 << 6, UCP_TITLE = 1 << 7,
    UCP_CASED = 1 << 8, UCP_CASE_IGNORABLE = 1 << 9, UCP_PRINTABLE = 1 << 10,
    UCP_ID_START = 1 << 11, UCP_ID_CONTINUE = 1 << 12, UCP_LINEBREAK = 1 << 13,
    UCP_NAME = 1 << 14
};

/* Case mapping kinds: index into UcCaseRecord.delta and UcCaseSpecial.kind. */
enum { UC_UPPER = 0, UC_LOWER = 1, UC_TITLE = 2, UC_FOLD = 3 };

typedef struct UcCaseRecord {
    int32_t delta[4];      /* mapped = cp + delta, for single code point mappings */
    uint8_t special;       /* bit k set: mapping k is multi code point (side table) */
} UcCaseRecord;

/* Code points start, start+stride, ... (count of them) share one record. */
typedef struct UcCaseRun {
    uint32_t start;
    uint16_t count;
    uint8_t stride;
    uint16_t record;
} UcCaseRun;

typedef struct UcCaseSpecial {
    uint32_t cp;
    uint8_t kind;
    uint8_t n;
    uint32_t out[3];
} UcCaseSpecial;

extern const char uc_unidata_version[];
#define UC_DIRECT_LIMIT 0x800
extern const uint16_t uc_direct_props[UC_DIRECT_LIMIT];  /* bits of cp < 0x800 */
extern const uint32_t uc_space_max;       /* no whitespace above this */
extern const uint32_t uc_linebreak_max;   /* no line break above this */
extern const size_t uc_prop_count;
extern const uint32_t uc_prop_start[];
extern const uint16_t uc_prop_bits[];
extern const UcCaseRecord uc_case_records[];
extern const size_t uc_case_run_count;
extern const UcCaseRun uc_case_runs[];
extern const size_t uc_case_special_count;
extern const UcCaseSpecial uc_case_special[];

#endif
