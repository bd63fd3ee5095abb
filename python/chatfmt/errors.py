"""Exceptions raised by chatfmt, one class per error kind of the C library.

The names are the Python exception class names a Jinja2 / transformers render
would raise, so ``except chatfmt.UndefinedError`` catches what
``except jinja2.exceptions.UndefinedError`` would. Every class derives from
:class:`ChatfmtError`; the Jinja-like ones derive from :class:`TemplateError`
as in Jinja2, and the Python-like ones also from the builtin of the same name
(``chatfmt.KeyError`` is a ``KeyError``), so existing ``except`` clauses work.
"""
import builtins


class ChatfmtError(Exception):
    """Base class. ``message`` is what Python would print as ``str(e)``;
    ``lineno`` / ``column`` locate template errors (None when unknown);
    ``offset`` is a byte offset for JSON and UTF-8 errors."""

    kind = "Error"

    def __init__(self, message="", lineno=None, column=None, offset=None, name=None):
        super().__init__(message)
        self.message = message
        self.lineno = lineno
        self.column = column
        self.offset = offset
        self.name = name

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (type(self), (self.message, self.lineno, self.column, self.offset, self.name))


# Jinja2's hierarchy: TemplateError > TemplateSyntaxError > TemplateAssertionError,
# TemplateError > TemplateRuntimeError > UndefinedError / SecurityError / FilterArgumentError.
class TemplateError(ChatfmtError):
    kind = "TemplateError"


class TemplateSyntaxError(TemplateError):
    kind = "TemplateSyntaxError"


class TemplateAssertionError(TemplateSyntaxError):
    kind = "TemplateAssertionError"


class TemplateRuntimeError(TemplateError):
    kind = "TemplateRuntimeError"


class FilterArgumentError(TemplateRuntimeError):
    kind = "FilterArgumentError"


class UndefinedError(TemplateRuntimeError):
    kind = "UndefinedError"


class SecurityError(TemplateRuntimeError):
    kind = "SecurityError"


def _python_like(name, builtin):
    return type(name, (ChatfmtError, builtin), {"kind": name, "__module__": __name__,
                                                "__doc__": f"{name} raised by a render."})


TypeError = _python_like("TypeError", builtins.TypeError)
ValueError = _python_like("ValueError", builtins.ValueError)
OverflowError = _python_like("OverflowError", builtins.OverflowError)
ZeroDivisionError = _python_like("ZeroDivisionError", builtins.ZeroDivisionError)
IndexError = _python_like("IndexError", builtins.IndexError)
KeyError = _python_like("KeyError", builtins.KeyError)
AttributeError = _python_like("AttributeError", builtins.AttributeError)
RuntimeError = _python_like("RuntimeError", builtins.RuntimeError)
MemoryError = _python_like("MemoryError", builtins.MemoryError)
IOError = _python_like("IOError", builtins.OSError)
# json.JSONDecodeError and UnicodeDecodeError are ValueErrors with their own
# constructors; ours keep the ValueError part.
JSONDecodeError = _python_like("JSONDecodeError", builtins.ValueError)
UnicodeDecodeError = _python_like("UnicodeDecodeError", builtins.ValueError)
FormatError = _python_like("FormatError", builtins.ValueError)
UsageError = _python_like("UsageError", builtins.ValueError)
AssertionError = _python_like("AssertionError", builtins.AssertionError)


class LimitError(ChatfmtError):
    """A chatfmt safety limit (steps, output size, memory, ...) was hit."""
    kind = "LimitError"


BY_KIND = {cls.kind: cls for cls in (
    TemplateError, TemplateSyntaxError, TemplateAssertionError, TemplateRuntimeError,
    FilterArgumentError, UndefinedError, SecurityError, TypeError, ValueError, OverflowError,
    ZeroDivisionError, IndexError, KeyError, AttributeError, RuntimeError, MemoryError, IOError,
    JSONDecodeError, UnicodeDecodeError, FormatError, UsageError, AssertionError, LimitError)}

__all__ = ["ChatfmtError"] + sorted(BY_KIND)
