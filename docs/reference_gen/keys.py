"""docs/reference/keys.md: every key binding of the workbench, from the ``BINDINGS`` of the classes
in tui/ (the app, the screens, the widgets), grouped by where they apply."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass

from textual.binding import Binding
from textual.keys import format_key

from docs.reference_gen import markdown as md

SOURCE = "the `BINDINGS` of the classes in tui/"

#: Page sections: (title, what it covers, module prefix), first match wins.
GROUPS = (
    ("Everywhere", "The application's own keys: they work on every screen.", "tui.app"),
    ("Main screen", "The workbench: timeline, run bar, answer panes and the analysis tabs.", "tui.screens.main"),
    ("Main screen: panes and tabs", "Keys of a pane or tab: they work while it has the focus.", "tui.widgets"),
    ("Other screens", "Screens opened over the workbench (and `prefscope annotate`'s).", "tui.screens"),
)


@dataclass(frozen=True)
class Holder:
    """A class of tui/ that declares key bindings."""

    module: str
    name: str
    bindings: tuple[Binding, ...]
    #: The class's own docstring (not one inherited from Textual's classes).
    doc: str | None


def holders() -> list[Holder]:
    """Every class in tui/ (not the CLI) with its own ``BINDINGS``, by module and line."""
    import tui

    found = []
    for info in pkgutil.walk_packages(tui.__path__, "tui."):
        if info.name.startswith("tui.cli"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and vars(obj).get("BINDINGS"):
                bindings = tuple(Binding.make_bindings(vars(obj)["BINDINGS"]))
                found.append(
                    (
                        info.name,
                        inspect.getsourcelines(obj)[1],
                        Holder(info.name, obj.__name__, bindings, vars(obj).get("__doc__")),
                    )
                )
    return [holder for *_, holder in sorted(found, key=lambda item: item[:2])]


def page(found: list[Holder]) -> str:
    sections = [
        "Every key of the workbench, where it works, and its binding id. Remap any of them by id in the "
        'config file\'s `[keymap]` table (`run = "ctrl+r,f5"`; see [configuration](configuration.md#keymap)); '
        "`F1` in the workbench shows the keys too. A key listed as not in the footer still works.",
    ]
    for title, about, prefix in GROUPS:
        mine = [h for h in found if h.module == prefix or h.module.startswith(prefix + ".")]
        found = [h for h in found if h not in mine]
        if mine:
            sections.append(f"## {title}\n\n{about}")
            shared = {h.module for h in mine if [g.module for g in mine].count(h.module) > 1}
            sections += [_holder_section(h, own_section=h.module != prefix, shared=h.module in shared) for h in mine]
    return md.page("Keys", SOURCE, *sections)


def _holder_section(holder: Holder, *, own_section: bool, shared: bool) -> str:
    """The holder's keys; ``own_section``: under a title and the first paragraph of its module's
    docstring, which says what the user sees (its own docstring first when the module holds
    several); a group that is one module has said what it is already."""
    rows = [
        (
            " ".join(md.code(format_key(key.strip())) for key in b.key.split(",")),
            md.code(b.id) if b.id else "",
            md.text(b.tooltip or b.description),
            "yes" if b.show else "no",
        )
        for b in holder.bindings
    ]
    keys = md.table(("key", "id", "what it does", "in the footer"), rows)
    where = md.code(f"{holder.module}.{holder.name}")
    if not own_section:
        return f"{keys}\n\nDeclared in {where}."
    module_doc = importlib.import_module(holder.module).__doc__
    doc = (holder.doc or module_doc) if shared else (module_doc or holder.doc)
    return "\n\n".join([f"### {_words(holder.name)}", f"{md.text(md.first_sentence(doc))} ({where})", keys])


def _words(class_name: str) -> str:
    """``JudgeQualityScreen`` → ``Judge quality screen``."""
    words = re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", class_name)
    return " ".join([words[0], *(w.lower() for w in words[1:])])
