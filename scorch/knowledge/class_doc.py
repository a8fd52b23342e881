"""One answer to "how do I call X": a help file and the running class merged by name.

The running library is the authority on what exists and on argument names and
defaults; the help file adds the words (summaries, per-argument docs, examples).
A class without a help file still gets a ClassDoc from its runtime record, and
a help file whose class is not in the library (or a guide) gets one from the
help alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from scorch.knowledge.introspect import ClassRecord, MethodRecord, format_default
from scorch.knowledge.schelp import HelpDoc, MethodDoc

# sclang's convention for private methods: prInit, prSend ...
_PRIVATE = re.compile(r"pr[A-Z_]")


@dataclass(frozen=True)
class ArgDoc:
    """One argument: its name, its default as sclang source, and what the help says."""

    name: str
    default: str | None
    doc: str


@dataclass(frozen=True)
class MethodEntry:
    """One method of a class, from the library, the help, or both."""

    name: str
    kind: str
    """``class`` (``SinOsc.ar``), ``instance`` (``x.play``) or ``generic`` (guides)."""
    args: tuple[ArgDoc, ...]
    varargs: bool
    summary: str
    returns: str
    in_library: bool
    """The running library has it; False for help-only entries (no defaults known)."""
    settable: bool = False
    """An instance property with a setter ``name_`` as well."""
    inherited_from: str = ""
    """The superclass that defines it, when the help documents an inherited method."""

    def signature(self) -> str:
        """Return ``ar(freq: 440, phase: 0, mul: 1, add: 0)``."""
        parts = [a.name if a.default is None else f"{a.name}: {a.default}" for a in self.args]
        if self.varargs and parts:
            parts[-1] = "... " + self.args[-1].name
        return f"{self.name}({', '.join(parts)})"


@dataclass(frozen=True)
class ClassDoc:
    """Everything the index knows about one name."""

    name: str
    kind: str
    """``class``, ``guide``, ``reference``, ``tutorial``, ``overview`` or ``other``."""
    key: str
    """The help key (``Classes/SinOsc``); for a class with no help file, ``Classes/NAME``."""
    title: str
    summary: str
    categories: tuple[str, ...]
    related: tuple[str, ...]
    superclasses: tuple[str, ...]
    file: str
    """The ``.sc`` file that defines the class; empty when not in the running library."""
    is_ugen: bool
    description: str
    class_methods: tuple[MethodEntry, ...]
    instance_methods: tuple[MethodEntry, ...]
    examples: tuple[str, ...]
    has_help: bool
    in_library: bool

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict; :meth:`from_dict` reads it back."""
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ClassDoc:
        """Rebuild a ClassDoc from :meth:`to_dict`'s output."""
        def methods(items: Sequence[Mapping[str, Any]]) -> tuple[MethodEntry, ...]:
            return tuple(MethodEntry(**{**m, "args": tuple(ArgDoc(**a) for a in m["args"])})
                         for m in items)

        fields = dict(raw)
        for name in ("categories", "related", "superclasses", "examples"):
            fields[name] = tuple(fields[name])
        fields["class_methods"] = methods(raw["class_methods"])
        fields["instance_methods"] = methods(raw["instance_methods"])
        return cls(**fields)


def merge(
    name: str,
    help_doc: HelpDoc | None,
    record: ClassRecord | None,
    *,
    extensions: Sequence[HelpDoc] = (),
    helps_by_class: Mapping[str, HelpDoc] | None = None,
    library: Mapping[str, ClassRecord] | None = None,
) -> ClassDoc:
    """Merge the help for ``name`` (and its ``.ext`` files) with its runtime record.

    ``library`` (every class by name) gives documented inherited methods, such as
    ``Array.fill`` (defined in Collection), their real signature.
    """
    documented = _documented_methods(help_doc, extensions, helps_by_class or {})
    private = set(help_doc.private) if help_doc else set()
    supers = [library[c] for c in (record.superclasses if record else ())
              if library and c in library]
    class_methods = _methods("class", documented, record.class_methods if record else (),
                             _inherited([(c.name, c.class_methods) for c in supers]), private)
    instance_methods = _methods("instance", documented,
                                record.instance_methods if record else (),
                                _inherited([(c.name, c.instance_methods) for c in supers]),
                                private)
    if help_doc is not None and help_doc.kind != "class":
        # A guide's methods are messages any object may answer (Reference/play: x.play).
        instance_methods = tuple(_help_only(m, n) for m in documented for n in m.names
                                 if m.kind == "generic")
    summary = help_doc.summary if help_doc else ""
    if not summary and record is not None:
        parent = record.superclasses[0] if record.superclasses else "no superclass"
        summary = f"(no help file) a {parent} subclass defined in {_short(record.file)}"
    description = ""
    if help_doc is not None:
        description = help_doc.description if help_doc.kind == "class" else help_doc.text
    return ClassDoc(
        name=name,
        kind=help_doc.kind if help_doc is not None else "class",
        key=help_doc.key if help_doc is not None else f"Classes/{name}",
        title=help_doc.title if help_doc is not None else name,
        summary=summary,
        categories=help_doc.categories if help_doc else (),
        related=help_doc.related if help_doc else (),
        superclasses=record.superclasses if record else (),
        file=record.file if record else "",
        is_ugen=record.is_ugen if record else False,
        description=description,
        class_methods=class_methods,
        instance_methods=instance_methods,
        examples=(help_doc.examples or help_doc.code) if help_doc else (),
        has_help=help_doc is not None,
        in_library=record is not None,
    )


def _documented_methods(
    help_doc: HelpDoc | None, extensions: Sequence[HelpDoc], helps: Mapping[str, HelpDoc]
) -> list[MethodDoc]:
    methods: list[MethodDoc] = []
    for doc in ([help_doc] if help_doc else []) + list(extensions):
        methods.extend(doc.methods)
        for copy in doc.copied:
            source = helps.get(copy.source_class)
            found = [m for m in (source.methods if source else ())
                     if m.kind == copy.kind and copy.name in m.names]
            methods.extend(found[:1])
    return methods


def _inherited(
    chain: list[tuple[str, tuple[MethodRecord, ...]]]
) -> dict[str, tuple[str, MethodRecord]]:
    """Return each method name with the nearest superclass that defines it."""
    found: dict[str, tuple[str, MethodRecord]] = {}
    for owner, methods in chain:
        for method in methods:
            found.setdefault(method.name, (owner, method))
    return found


def _methods(
    kind: str, documented: list[MethodDoc], records: Sequence[MethodRecord],
    inherited: Mapping[str, tuple[str, MethodRecord]], private: set[str],
) -> tuple[MethodEntry, ...]:
    docs: dict[str, MethodDoc] = {}
    for method in documented:
        if method.kind == kind:
            for name in method.names:
                docs.setdefault(name, method)
    by_name = {r.name: r for r in records}
    entries: list[MethodEntry] = []
    done: set[str] = set()
    # Documented methods first, in the help's order; then the rest of the library's.
    for name in [*docs, *sorted(by_name)]:
        if name in done or name in private or _PRIVATE.match(name):
            continue
        base = name[:-1] if name.endswith("_") and len(name) > 1 else ""
        if base and (base in by_name or base in docs):
            continue  # the setter of a property documented or defined under its getter
        done.add(name)
        record, doc = by_name.get(name), docs.get(name)
        if record is not None:
            entries.append(_from_record(kind, record, doc, f"{name}_" in by_name))
        elif doc is not None and name in inherited:
            owner, parent = inherited[name]
            entry = _from_record(kind, parent, doc, f"{name}_" in inherited)
            entries.append(replace(entry, inherited_from=owner))
        elif doc is not None:
            entries.append(_help_only(doc, name))
    return tuple(entries)


def _from_record(kind: str, record: MethodRecord, doc: MethodDoc | None,
                 settable: bool) -> MethodEntry:
    arg_docs = _arg_docs(doc, [a.name for a in record.args])
    return MethodEntry(
        name=record.name, kind=kind, varargs=record.varargs,
        args=tuple(ArgDoc(a.name, format_default(a.default, a.default_code), arg_docs[i])
                   for i, a in enumerate(record.args)),
        summary=doc.summary if doc else "", returns=doc.returns if doc else "",
        in_library=True, settable=settable,
    )


def _help_only(doc: MethodDoc, name: str) -> MethodEntry:
    names = [a.name.removeprefix("... ") for a in doc.arguments]
    varargs = bool(doc.arguments) and doc.arguments[-1].name.startswith("...")
    return MethodEntry(
        name=name, kind=doc.kind, varargs=varargs,
        args=tuple(ArgDoc(n or f"arg{i + 1}", None, a.doc)
                   for i, (n, a) in enumerate(zip(names, doc.arguments, strict=True))),
        summary=doc.summary, returns=doc.returns, in_library=False,
    )


def _arg_docs(doc: MethodDoc | None, names: list[str]) -> list[str]:
    """Match the help's argument docs to the real arguments: by name, else by position."""
    result = [""] * len(names)
    if doc is None:
        return result
    for i, arg in enumerate(doc.arguments):
        written = arg.name.removeprefix("... ").strip()
        if written in names:
            result[names.index(written)] = arg.doc
        elif not written and i < len(names):
            result[i] = arg.doc
    return result


def _short(path: str) -> str:
    return path.rsplit("/", 1)[-1] if path else "an unknown file"
