"""The ctypes structures match include/chatfmt.h: a C program built from the
header prints each struct's size and its fields' offsets, and the binding's
declarations must agree (catches a field added to the header but not here)."""
import os
import shutil
import subprocess
import tempfile
import unittest

from support import REPO, chatfmt

_lib = chatfmt._lib
STRUCTS = {
    "cf_error": _lib.Error, "cf_limits": _lib.Limits, "cf_span": _lib.Span, "cf_result": _lib.Result,
    "cf_compile_options": _lib.CompileOptions, "cf_render_options": _lib.RenderOptions,
    "cf_load_options": _lib.LoadOptions, "cf_source": _lib.Source, "cf_reply_options": _lib.ReplyOptions,
    "cf_render_buffer": _lib.RenderBuffer,
}


def c_layout():
    """{struct: (sizeof, [(field, offsetof)...])} from the C compiler, or None."""
    cc = os.environ.get("CC", "cc")
    if not shutil.which(cc):
        return None
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "chatfmt.h"', "int main(void) {"]
    for cname, cls in STRUCTS.items():
        lines.append(f'printf("{cname} %zu\\n", sizeof({cname}));')
        for field, _ in cls._fields_:
            lines.append(f'printf("{cname}.{field} %zu\\n", offsetof({cname}, {field}));')
    lines += ["return 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "abi.c"), os.path.join(d, "abi")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        r = subprocess.run([cc, "-std=c11", "-I", os.path.join(REPO, "include"), src, "-o", exe],
                           capture_output=True, text=True)
        if r.returncode:
            raise AssertionError("the header and the binding disagree on field names:\n" + r.stderr[:2000])
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    return dict(line.split() for line in out.splitlines())


class Abi(unittest.TestCase):
    def test_struct_layouts_match_the_header(self):
        layout = c_layout()
        if layout is None:
            self.skipTest("no C compiler")
        for cname, cls in STRUCTS.items():
            with self.subTest(struct=cname):
                for field, _ in cls._fields_:
                    self.assertEqual(getattr(cls, field).offset, int(layout[f"{cname}.{field}"]), field)
                self.assertEqual(ctypes_sizeof(cls), int(layout[cname]), "size: a field is missing here")


def ctypes_sizeof(cls):
    import ctypes
    return ctypes.sizeof(cls)


if __name__ == "__main__":
    unittest.main()
